r"""A code-review summariser with run-time dependencies.

The agent is defined once; the pull request it reviews arrives at run time as ``ReviewDeps``
(repository, diff, team guidelines). Its tools read the diff through ``RunContext``, the system
prompt is built from the deps, and a validator uses them to make sure every finding points into
the diff and that a blocker never comes with an "approve".

Run it:

    python examples/code_review.py             # scripted model without ANTHROPIC_API_KEY, live with it
    typedagent run examples/code_review.py:agent "Review this pull request." \\
        --deps-json @examples/code_review_deps.json
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from typedagent import OutputRejected, OutputTool, RunContext, define_agent, execute_agent_sync, tool
from typedagent.testing import ScriptedClient, output_call, response, tool_call, usage


@dataclass(frozen=True)
class ReviewDeps:
    """What one review run works on; build it from your CI (or pass ``--deps-json`` on the command line)."""

    repository: str
    diff: str
    guidelines: list[str] = field(default_factory=list)

    def files(self) -> dict[str, str]:
        """The diff split per file: path → that file's hunks."""
        parts = re.split(r"^diff --git a/\S+ b/(\S+)\n", self.diff, flags=re.M)
        return {path: hunks for path, hunks in zip(parts[1::2], parts[2::2], strict=True)}


class Finding(BaseModel):
    path: str = Field(description="File the finding is about, as named in the diff.")
    line: int | None = Field(description="Line in the new version of the file, if the finding has one.")
    severity: Literal["blocker", "major", "minor", "nit"]
    message: str = Field(description="What is wrong and how to fix it, in one or two sentences.")


class ReviewSummary(BaseModel):
    """A review the author can act on."""

    verdict: Literal["approve", "comment", "request_changes"]
    summary: str = Field(description="Two or three sentences: what the change does and whether it is ready.")
    findings: list[Finding]


@tool
def changed_files(ctx: RunContext[ReviewDeps]) -> list[dict[str, object]]:
    """List the files the pull request changes, with lines added and removed."""
    listing = []
    for path, hunks in ctx.deps.files().items():
        lines = hunks.splitlines()
        added = sum(line.startswith("+") and not line.startswith("+++") for line in lines)
        removed = sum(line.startswith("-") and not line.startswith("---") for line in lines)
        listing.append({"path": path, "added": added, "removed": removed})
    return listing


@tool
def read_diff(ctx: RunContext[ReviewDeps], path: str) -> str:
    """Read the diff of one changed file.

    Args:
        ctx: The run context; its deps hold the pull request.
        path: A path returned by changed_files.
    """
    files = ctx.deps.files()
    if path not in files:
        raise LookupError(f"{path!r} is not changed by this pull request; changed files: {sorted(files)}")
    return files[path]


def instructions(ctx: RunContext[ReviewDeps]) -> str:
    guidelines = "\n".join(f"- {rule}" for rule in ctx.deps.guidelines) or "- (none)"
    return (
        f"You review pull requests for {ctx.deps.repository}. Read the diff of every changed file before "
        f"you judge it. Report real problems only, most severe first.\n\nTeam guidelines:\n{guidelines}"
    )


def findings_point_into_the_diff(review: ReviewSummary, ctx: RunContext[ReviewDeps]) -> None:
    """Every finding names a file this pull request changes."""
    files = ctx.deps.files()
    stray = [finding.path for finding in review.findings if finding.path not in files]
    if stray:
        raise OutputRejected(f"findings name files the diff does not change: {stray}; changed: {sorted(files)}")


def verdict_matches_findings(review: ReviewSummary) -> None:
    """A blocker or major finding cannot come with an approval."""
    serious = [f for f in review.findings if f.severity in ("blocker", "major")]
    if serious and review.verdict == "approve":
        raise OutputRejected(f"verdict: 'approve' despite {len(serious)} blocker/major finding(s); request changes")


agent = define_agent(
    name="code_review",
    model="claude-sonnet-4-6",
    instructions=instructions,
    output=OutputTool(ReviewSummary, name="submit_review", description="Hand over the review."),
    helpers=[changed_files, read_diff],
    validators=[findings_point_into_the_diff, verdict_matches_findings],
    deps_type=ReviewDeps,
)

PROMPT = "Review this pull request: 'Retry failed payment captures'."

SAMPLE_DIFF = """\
diff --git a/payments/capture.py b/payments/capture.py
--- a/payments/capture.py
+++ b/payments/capture.py
@@ -1,6 +1,13 @@
+import time
+
 from payments.gateway import GatewayError, gateway


 async def capture(payment_id: str, amount_cents: int) -> str:
-    receipt = await gateway.capture(payment_id, amount_cents)
-    return receipt.id
+    for attempt in range(5):
+        try:
+            receipt = await gateway.capture(payment_id, amount_cents)
+            return receipt.id
+        except:
+            time.sleep(2**attempt)
+    raise GatewayError(f"capture of {payment_id} failed after 5 attempts")
diff --git a/tests/test_capture.py b/tests/test_capture.py
--- a/tests/test_capture.py
+++ b/tests/test_capture.py
@@ -12,1 +12,6 @@ async def test_capture_returns_receipt(fake_gateway):
     assert await capture("pay_1", 500) == "rcpt_1"
+
+
+async def test_capture_retries(fake_gateway):
+    fake_gateway.fail_times(2)
+    assert await capture("pay_2", 500) == "rcpt_2"
"""


def deps() -> ReviewDeps:
    """The pull request the scripted run reviews."""
    return ReviewDeps(
        repository="acme/payments",
        diff=SAMPLE_DIFF,
        guidelines=[
            "Never block the event loop: use asyncio.sleep in async code.",
            "Catch specific exceptions; a bare except also swallows cancellation.",
            "Retries of payment operations must be idempotent.",
        ],
    )


REVIEW = ReviewSummary(
    verdict="request_changes",
    summary=(
        "Adds up to five retries around gateway captures, with a test for the retry path. The retry loop "
        "blocks the event loop and swallows every exception, cancellation included, so it is not ready."
    ),
    findings=[
        Finding(
            path="payments/capture.py",
            line=12,
            severity="blocker",
            message="time.sleep() blocks the event loop for up to 16 s; use await asyncio.sleep().",
        ),
        Finding(
            path="payments/capture.py",
            line=11,
            severity="major",
            message="A bare except also catches CancelledError and programming errors; catch GatewayError only.",
        ),
        Finding(
            path="payments/capture.py",
            line=9,
            severity="major",
            message="A retried capture may charge twice; pass an idempotency key to gateway.capture().",
        ),
        Finding(
            path="tests/test_capture.py",
            line=15,
            severity="minor",
            message="Also test that the fifth failure raises GatewayError.",
        ),
    ],
)


def scripted_client() -> ScriptedClient:
    """The model's side of a typical run, so the example runs offline (tools and validators run for real)."""
    return ScriptedClient(
        [
            response(
                tool_call("changed_files"),
                usage=usage(input_tokens=1320, output_tokens=38, cache_creation_input_tokens=1010),
            ),
            response(
                tool_call("read_diff", {"path": "payments/capture.py"}),
                tool_call("read_diff", {"path": "tests/test_capture.py"}),
                usage=usage(input_tokens=96, output_tokens=84, cache_read_input_tokens=1010),
            ),
            response(
                output_call(REVIEW), usage=usage(input_tokens=512, output_tokens=396, cache_read_input_tokens=1010)
            ),
        ]
    )


if __name__ == "__main__":
    live = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if not live:
        print("No ANTHROPIC_API_KEY: the model is scripted.", file=sys.stderr)
    result = execute_agent_sync(agent, PROMPT, deps=deps(), client=None if live else scripted_client())
    print(result.unwrap().model_dump_json(indent=2))
