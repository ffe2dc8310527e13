"""The determinism seam (``_shared/determinism.py``) and the steps seam (``_run/steps.py``).

Every clock read, sleep, id, random draw and thread hop of an execution goes through the runtime of its context;
every model call and helper call through its steps. That is what lets a durable engine replay the loop.
"""

from __future__ import annotations

import ast
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support import GOOD, Triage, triage_agent

from typedagent import (
    Alternative,
    ExecutionLimits,
    FallbackPolicy,
    OutputTool,
    ValidationConfig,
    define_agent,
    execute_agent,
    tool,
)
from typedagent._api.fallback import WAIT_CAP
from typedagent._run.records import ModelCallInput, StepClient, run_recorded_model_call
from typedagent._run.steps import OWN_MODEL, ModelCall, Steps, steps, use_steps
from typedagent._shared.determinism import SYSTEM, Runtime, runtime, use_runtime
from typedagent.testing import (
    FunctionClient,
    FunctionReturn,
    MessagesRequest,
    ScriptedClient,
    api_error,
    output_call,
    response,
    tool_call,
)

SRC = Path(__file__).parent.parent / "src" / "typedagent"


class FrozenRuntime(Runtime):
    """A clock that moves only when told, ids and random numbers from a counter, and no threads."""

    inline_sync_calls = True

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []
        self.count = 0

    def clock(self) -> float:
        self.now += 0.5  # every read moves it half a second
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def new_id(self) -> str:
        self.count += 1
        return f"id-{self.count}"

    def random(self) -> float:
        return 0.25


def test_the_system_runtime_reads_the_machine() -> None:
    """By default: a monotonic clock, 32-hex-digit ids, random numbers in [0, 1), worker threads for sync code."""
    assert runtime() is SYSTEM
    first, second = SYSTEM.clock(), SYSTEM.clock()
    assert second >= first
    ids = {SYSTEM.new_id() for _ in range(200)}
    assert len(ids) == 200
    parsed = [uuid.UUID(hex=i) for i in ids]  # random UUIDs (version 4, RFC 4122 variant), as 32 lowercase hex digits
    assert all(u.version == 4 and u.variant == uuid.RFC_4122 and u.hex == i for u, i in zip(parsed, ids, strict=True))
    assert 0 <= SYSTEM.random() < 1
    assert abs(SYSTEM.wall_clock() - datetime.now(UTC).timestamp()) < 60  # seconds since the epoch
    assert not SYSTEM.inline_sync_calls


async def test_an_execution_reads_its_time_from_the_runtime_of_its_context() -> None:
    """Latency and callback times come from the runtime's clock, not the machine's: a replay computes the same."""
    frozen = FrozenRuntime()
    with use_runtime(frozen):
        assert runtime() is frozen
        result = await execute_agent(triage_agent(), "hi", client=ScriptedClient([output_call(GOOD)]))
    assert runtime() is SYSTEM
    assert result.ok
    # The clock moves 0.5 s per read: the latency is a whole number of half seconds, and far from the machine's.
    assert result.metadata.latency_ms >= 500
    assert result.metadata.latency_ms % 500 == 0


async def test_the_deadline_runs_on_the_runtime_clock() -> None:
    """A deadline is measured on the runtime's clock: a clock that jumps past it times the execution out."""

    class Jumping(FrozenRuntime):
        def clock(self) -> float:
            self.now += 10.0
            return self.now

    with use_runtime(Jumping()):
        result = await execute_agent(
            triage_agent(), "hi", client=ScriptedClient([output_call(GOOD)]), limits=ExecutionLimits(timeout_s=5)
        )
    assert not result.ok
    assert result.error.code == "TIMEOUT"


async def test_sync_user_code_runs_on_the_loop_thread_when_the_runtime_has_no_threads() -> None:
    """A workflow has no threads: sync validators and tools run inline, in the caller's thread."""
    seen: list[int] = []

    def check(output: Triage) -> None:
        seen.append(threading.get_ident())

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        seen.append(threading.get_ident())
        return key

    agent = define_agent(
        name="inline", model="claude-sonnet-4-6", output=OutputTool(Triage), helpers=[lookup], validators=[check]
    )
    script = [tool_call("lookup", {"key": "a"}), output_call(GOOD)]
    with use_runtime(FrozenRuntime()):
        result = await execute_agent(agent, "hi", client=ScriptedClient(script))
    assert result.ok
    assert seen == [threading.get_ident()] * 2
    seen.clear()
    result = await execute_agent(agent, "hi", client=ScriptedClient(script))
    assert result.ok
    assert len(seen) == 2
    assert threading.get_ident() not in seen


async def test_model_calls_and_helper_calls_go_through_the_steps_of_the_context() -> None:
    """A durable engine's steps make each call: here, a recording one around the default."""
    made: list[str] = []

    class Recording(Steps):
        async def model_call(self, execution: Any, params: dict[str, Any], call: ModelCall = OWN_MODEL) -> Any:
            made.append(f"model:{len(params['messages'])}")
            return await super().model_call(execution, params, call)

        async def helper_call(self, execution: Any, reply: Any, helper: Any, ctx: Any, limit: int) -> None:
            made.append(f"tool:{reply.block.name}")
            await super().helper_call(execution, reply, helper, ctx, limit)

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return key

    agent = define_agent(
        name="steps",
        model="claude-sonnet-4-6",
        output=OutputTool(Triage),
        helpers=[lookup],
        validation=ValidationConfig(max_attempts=1),
    )
    script = [tool_call("lookup", {"key": "a"}), tool_call("nope", {}, unknown=True), output_call(GOOD)]
    recording = Recording()
    with use_steps(recording):
        assert steps() is recording
        result = await execute_agent(agent, "hi", client=ScriptedClient(script))
    assert result.ok
    # The unknown tool is answered by the steps too (the durable ones answer it without an activity).
    assert made == ["model:1", "tool:lookup", "model:3", "tool:nope", "model:5"]
    assert type(steps()) is Steps


async def test_each_model_of_a_fallback_chain_is_called_through_the_steps() -> None:
    """A call that moves on to an alternative goes through the steps too, naming the alternative and the wait cap.

    The alternative's index is what a durable step records: the worker calls that alternative's own client.
    """
    made: list[tuple[str, int | None, float | None, bool]] = []

    class Recording(Steps):
        async def model_call(self, execution: Any, params: dict[str, Any], call: ModelCall = OWN_MODEL) -> Any:
            made.append((params["model"], call.alternative, call.wait_cap, call.client is None))
            return await super().model_call(execution, params, call)

    alternate = ScriptedClient([output_call(GOOD)])
    agent = define_agent(
        name="chain",
        model="claude-sonnet-4-6",
        output=OutputTool(Triage),
        fallback=[Alternative("claude-haiku-4-5", client=alternate)],
        fallback_policy=FallbackPolicy(max_retry_after_s=7),
    )
    with use_steps(Recording()), use_runtime(FrozenRuntime()):
        result = await execute_agent(agent, "hi", client=ScriptedClient([api_error(529)]))
    assert result.ok, result
    assert result.output == Triage.model_validate(GOOD)
    # The own model first (the worker's client, capped: another model can take it), then the alternative's client.
    assert made == [("claude-sonnet-4-6", None, 7, True), ("claude-haiku-4-5", 0, None, False)]
    assert result.metadata.iterations == 2


LOOP_PARTS = ["_run", "_shared/limits.py", "_shared/threads.py", "_agent"]
NONDETERMINISTIC = {"time", "random", "uuid", "secrets", "datetime"}


@pytest.mark.parametrize(
    "path",
    sorted(p for part in LOOP_PARTS for p in ((SRC / part).rglob("*.py") if (SRC / part).is_dir() else [SRC / part])),
    ids=lambda p: str(p.relative_to(SRC)),
)
def test_the_loop_reads_no_clock_ids_or_random_numbers_but_through_the_seam(path: Path) -> None:
    """The loop's modules import no time, random, uuid, secrets or datetime: only determinism.py does."""
    tree = ast.parse(path.read_text())
    imported = {
        alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names
    }
    imported |= {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and not node.level
    }
    assert not imported & NONDETERMINISTIC, imported & NONDETERMINISTIC


async def test_a_recorded_model_call_goes_to_the_alternative_it_names_with_its_wait_cap() -> None:
    """The step side of a fallback call: the worker's client, or the named alternative's, the wait cap set."""
    seen: list[tuple[str, str, float | None]] = []

    def answering(who: str) -> FunctionClient:
        def answer(request: MessagesRequest) -> FunctionReturn:
            seen.append((who, request["model"], WAIT_CAP.get()))
            return response(f"from the {who}")

        return FunctionClient(answer)

    agent = define_agent(
        name="chain",
        model="claude-sonnet-4-6",
        output=OutputTool(Triage),
        fallback=[Alternative("claude-haiku-4-5", client=answering("alternative"))],
    )
    clients = StepClient(answering("worker"))
    params: dict[str, Any] = {
        "model": "claude-sonnet-4-6",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "hi"}],
    }
    own = await run_recorded_model_call(agent, clients, ModelCallInput(params=params, wait_cap=7))
    moved = await run_recorded_model_call(
        agent, clients, ModelCallInput(params={**params, "model": "claude-haiku-4-5"}, alternative=0)
    )
    assert seen == [("worker", "claude-sonnet-4-6", 7), ("alternative", "claude-haiku-4-5", None)]
    assert WAIT_CAP.get() is None
    texts = [getattr(output.rebuild(beta=False).content[0], "text", None) for output in (own, moved)]
    assert texts == ["from the worker", "from the alternative"]
