"""Support-ticket triage with knowledge-base helper tools and reflection.

The model searches a small knowledge base, reads the articles that look relevant, previews its
triage through the reflection handler, drops an article that turned out not to apply, and submits.
A validator makes sure every cited article exists, so the model cannot invent one.

Run it:

    python examples/support_triage.py          # scripted model without ANTHROPIC_API_KEY, live with it
    typedagent run examples/support_triage.py:agent "Ticket: my VPN drops every hour"
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from pydantic import BaseModel, Field

from typedagent import OutputRejected, OutputTool, ValidationConfig, define_agent, execute_agent_sync, tool
from typedagent.testing import ScriptedClient, output_call, response, submit_call, text, tool_call, usage


@dataclass(frozen=True)
class Article:
    title: str
    body: str


KNOWLEDGE_BASE = {
    "KB-101": Article(
        title="VPN disconnects about every 60 minutes",
        body=(
            "Clients older than 5.2 do not answer the gateway's hourly rekey, so the tunnel drops and "
            "reconnects. Fix: update the VPN client to 5.2 or later. Workaround: raise the rekey "
            "interval on the user's profile to 8 hours."
        ),
    ),
    "KB-207": Article(
        title="Password reset e-mail never arrives",
        body="Reset mails are sent from no-reply@acme.example; ask the user to check the quarantine folder.",
    ),
    "KB-318": Article(
        title="Wi-Fi drops on conference-room access points",
        body="Access points in rooms 3.01-3.12 roam clients aggressively. Fix: pin the laptop to the 5 GHz band.",
    ),
}


class Triage(BaseModel):
    """How support should handle one ticket."""

    severity: int = Field(ge=1, le=4, description="1 = outage for many users, 2 = one user blocked, 4 = a question.")
    category: str = Field(description="One of: network, account, billing, hardware, other.")
    summary: str = Field(description="One sentence a support engineer can act on.")
    kb_articles: list[str] = Field(description="Ids of the knowledge-base articles that apply, e.g. KB-101.")
    next_step: str = Field(description="What support should do first.")


@tool
def search_kb(query: str, limit: int = 3) -> list[dict[str, str]]:
    """Search the knowledge base by keywords; returns matching article ids and titles, best first.

    Args:
        query: Words to look for in article titles and bodies.
        limit: Most articles to return.
    """
    words = [word for word in query.lower().split() if len(word) > 2]
    scored = []
    for article_id, article in KNOWLEDGE_BASE.items():
        haystack = f"{article.title} {article.body}".lower()
        score = sum(word in haystack for word in words)
        if score:
            scored.append((-score, article_id))
    return [{"id": article_id, "title": KNOWLEDGE_BASE[article_id].title} for _, article_id in sorted(scored)[:limit]]


@tool
def read_article(article_id: str) -> str:
    """Read one knowledge-base article in full.

    Args:
        article_id: An id returned by search_kb, e.g. "KB-101".
    """
    article = KNOWLEDGE_BASE.get(article_id)
    if article is None:
        raise LookupError(f"there is no article {article_id!r}; use an id returned by search_kb")
    return f"{article.title}\n\n{article.body}"


def preview(triage: Triage) -> str:
    """What the model sees after each emit_triage call: the triage as support will read it."""
    cited = "\n".join(
        f"  - {article_id}: {KNOWLEDGE_BASE[article_id].title if article_id in KNOWLEDGE_BASE else '(unknown id)'}"
        for article_id in triage.kb_articles
    )
    return (
        f"Severity {triage.severity}, {triage.category}: {triage.summary}\n"
        f"Articles:\n{cited or '  (none)'}\n"
        f"Next step: {triage.next_step}\n"
        "If every article applies to this ticket, call submit; otherwise call emit_triage again."
    )


def cites_existing_articles(triage: Triage) -> None:
    """The model may only cite articles that exist."""
    if not triage.kb_articles:
        raise OutputRejected("kb_articles is empty: cite at least one knowledge-base article")
    unknown = [article_id for article_id in triage.kb_articles if article_id not in KNOWLEDGE_BASE]
    if unknown:
        raise OutputRejected(f"kb_articles: {unknown} do not exist; cite ids returned by search_kb")


agent = define_agent(
    name="support_triage",
    model="claude-sonnet-4-6",
    instructions=(
        "You triage support tickets for Acme's IT help desk. Search the knowledge base, read the articles "
        "that look relevant, and cite only the ones that really apply to the ticket."
    ),
    output=OutputTool(
        Triage, name="emit_triage", description="Hand over the triage of the ticket.", reflection_handler=preview
    ),
    helpers=[search_kb, read_article],
    validators=[cites_existing_articles],
    validation=ValidationConfig(max_attempts=2, max_iterations_per_attempt=8),
)

PROMPT = (
    "Ticket #4812 from j.alvarez: since Monday my VPN connection drops roughly every hour and I have to "
    "log in again. I'm working from home, so I can't reach the file shares while it reconnects."
)

FIRST_DRAFT = Triage(
    severity=2,
    category="network",
    summary="VPN tunnel drops hourly for a remote user, blocking access to file shares.",
    kb_articles=["KB-101", "KB-318"],
    next_step="Check the user's VPN client version and update it to 5.2 or later.",
)


def scripted_client() -> ScriptedClient:
    """The model's side of a typical run, so the example runs offline (tools and validators run for real)."""
    return ScriptedClient(
        [
            response(
                text("I'll look for known VPN issues first."),
                tool_call("search_kb", {"query": "vpn connection drops every hour"}),
                usage=usage(input_tokens=1180, output_tokens=58, cache_creation_input_tokens=920),
            ),
            response(
                tool_call("read_article", {"article_id": "KB-101"}),
                tool_call("read_article", {"article_id": "KB-318"}),
                usage=usage(input_tokens=164, output_tokens=71, cache_read_input_tokens=920),
            ),
            response(
                output_call(FIRST_DRAFT),
                usage=usage(input_tokens=298, output_tokens=142, cache_read_input_tokens=920),
            ),
            response(
                text("KB-318 is about conference-room Wi-Fi, not a home VPN; dropping it."),
                output_call(FIRST_DRAFT.model_copy(update={"kb_articles": ["KB-101"]})),
                usage=usage(input_tokens=231, output_tokens=150, cache_read_input_tokens=920),
            ),
            response(submit_call(), usage=usage(input_tokens=205, output_tokens=31, cache_read_input_tokens=920)),
        ]
    )


if __name__ == "__main__":
    live = bool(os.environ.get("ANTHROPIC_API_KEY"))
    if not live:
        print("No ANTHROPIC_API_KEY: the model is scripted.", file=sys.stderr)
    result = execute_agent_sync(agent, PROMPT, client=None if live else scripted_client())
    print(result.unwrap().model_dump_json(indent=2))
