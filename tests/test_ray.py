"""``typedagent.ray``: executions over a local Ray cluster, results as the local run, a dead worker's shard retried."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray")

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS / "testing"))

from ray_support import DiesOnce, ServerClient  # noqa: E402
from toolkit_support import PARIS, geo_agent  # noqa: E402

from typedagent import ManyResult, RunInput, execute_many_sync  # noqa: E402
from typedagent.ray import execute_many_ray, execute_many_ray_sync  # noqa: E402
from typedagent.testing import FakeAnthropicServer, output_call, tool_call  # noqa: E402

SCENARIO = [tool_call("lookup", {"query": "Paris"}), output_call(PARIS)]
PROMPTS = [f"How many people live in city {n}?" for n in range(12)]


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """One local Ray cluster (2 CPUs, no dashboard) for the module; workers import the test helpers."""
    path = os.pathsep.join([str(TESTS), str(TESTS / "testing"), os.environ.get("PYTHONPATH", "")])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": path}},
    )
    yield
    ray.shutdown()


def _comparable(result: ManyResult[Any]) -> Any:
    meta = dataclasses.replace(result.result.metadata, latency_ms=0.0, messages=[])
    return (result.index, result.key, getattr(result.result, "output", None), meta)


def test_ray_results_equal_the_local_run(tmp_path: Path) -> None:
    """Two workers over shards of 5 give every input the result of a local ``execute_many``, journaled once."""
    with FakeAnthropicServer(SCENARIO, per_conversation=True) as server:
        local = execute_many_sync(geo_agent(), PROMPTS, client=server.client())
        journal = tmp_path / "out.jsonl"
        spread = execute_many_ray_sync(
            geo_agent(), PROMPTS, workers=2, shard_size=5, client_factory=ServerClient(server.base_url), journal=journal
        )
        assert len(server.requests) == 2 * 2 * len(PROMPTS)
        again = execute_many_ray_sync(
            geo_agent(), PROMPTS, workers=2, shard_size=5, client_factory=ServerClient(server.base_url), journal=journal
        )
    assert [_comparable(result) for result in spread] == [_comparable(result) for result in local]
    assert all(result.result.ok for result in spread)
    assert [result.resumed for result in again] == [True] * len(PROMPTS)
    assert [_comparable(result)[:3] for result in again] == [_comparable(result)[:3] for result in local]
    keys = [json.loads(line)["key"] for line in journal.read_text().splitlines()]
    assert sorted(keys) == sorted(f"#{n}" for n in range(len(PROMPTS)))


def test_ray_a_dead_worker_has_its_shard_run_again(tmp_path: Path) -> None:
    """A worker dying mid-shard loses nothing: its shard runs on a new worker, every key journaled once."""
    inputs = [RunInput(prompt, key=f"k{n}") for n, prompt in enumerate(PROMPTS)]
    journal = tmp_path / "out.jsonl"
    with FakeAnthropicServer(SCENARIO, per_conversation=True, latency_ms=300) as server:
        factory = DiesOnce(server.base_url, str(tmp_path / "died"), after_s=0.4)
        results = execute_many_ray_sync(
            geo_agent(), inputs, workers=2, shard_size=4, client_factory=factory, journal=journal
        )
    assert (tmp_path / "died").exists()
    assert [result.key for result in results] == [f"k{n}" for n in range(len(PROMPTS))]
    assert all(result.result.ok for result in results)
    keys = [json.loads(line)["key"] for line in journal.read_text().splitlines()]
    assert sorted(keys) == sorted(f"k{n}" for n in range(len(PROMPTS)))
    assert len(server.requests) > 2 * len(PROMPTS)  # the dead worker's shard was sent again


def test_ray_refuses_bad_arguments() -> None:
    """Wrong argument types and a missing Ray cluster are clear errors."""
    with pytest.raises(TypeError, match="workers must be an int >= 1"):
        execute_many_ray_sync(geo_agent(), PROMPTS, workers=0)
    with pytest.raises(TypeError, match="iterable of prompts"):
        execute_many_ray_sync(geo_agent(), "one prompt")
    with pytest.raises(TypeError, match="AgentDefinition"):
        execute_many_ray_sync("agent", PROMPTS)  # type: ignore[arg-type]


def test_ray_abort_keeps_what_finished_and_resumes(tmp_path: Path) -> None:
    """The abort event stops the run after a result; a run with the same journal does only the rest."""
    journal = tmp_path / "out.jsonl"
    abort = threading.Event()
    with FakeAnthropicServer(SCENARIO, per_conversation=True, latency_ms=50) as server:
        factory = ServerClient(server.base_url)

        async def first_shard_then_abort() -> list[ManyResult[Any]]:
            stream = execute_many_ray(
                geo_agent(),
                PROMPTS,
                workers=1,
                shard_size=4,
                client_factory=factory,
                journal=journal,
                abort_event=abort,
            )
            async with contextlib.aclosing(stream):
                seen = []
                async for item in stream:
                    seen.append(item)
                    abort.set()
                return seen

        first = asyncio.run(first_shard_then_abort())
        rest = execute_many_ray_sync(
            geo_agent(), PROMPTS, workers=1, shard_size=4, client_factory=factory, journal=journal
        )
    assert 1 <= len(first) < len(PROMPTS)  # results stream in one by one: the abort came after the first
    assert sorted(item.key for item in rest if item.resumed) == sorted(item.key for item in first)
    assert sorted(item.key for item in rest) == sorted(f"#{n}" for n in range(len(PROMPTS)))
    assert len(journal.read_text().splitlines()) == len(PROMPTS)
