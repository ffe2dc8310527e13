"""``typedagent batch --ray ADDRESS``: connect to the Ray cluster and run the batch's inputs over it."""

from __future__ import annotations

import argparse
import importlib
import os
from collections.abc import AsyncGenerator
from pathlib import Path
from types import ModuleType
from typing import Any

from .._agent.definition import AgentDefinition
from .._agent.locate import UsageError
from .._api.transport import Transport
from .._many.scheduler import ManyResult
from .._shared.limits import AbortEvent
from ._batch_inputs import read_inputs
from ._batch_view import BatchView

__all__ = ["connect_ray", "ray_stream"]


def connect_ray(address: str, module: ModuleType) -> None:
    """Join (or, for ``"local"``, start) the Ray cluster; the agent's module travels to the workers by value.

    Raises:
        UsageError: Ray is not installed, or the cluster cannot be reached.
    """
    try:
        ray: Any = importlib.import_module("ray")
        cloudpickle: Any = importlib.import_module("ray.cloudpickle")
    except ImportError:
        raise UsageError("--ray needs Ray: pip install 'typedagent[ray]'") from None
    # A module loaded from a file is not importable on the workers: send its code along with the agent.
    cloudpickle.register_pickle_by_value(module)
    env = {name: value for name, value in os.environ.items() if name.startswith("ANTHROPIC_")}
    try:
        ray.init(address=address, runtime_env={"env_vars": env}, log_to_driver=False, include_dashboard=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(f"--ray {address}: cannot join the Ray cluster: {exc}") from None


def ray_stream(
    agent: AgentDefinition[Any, Any],
    path: Path,
    args: argparse.Namespace,
    view: BatchView,
    *,
    concurrency: int,
    transport: Transport,
    abort: AbortEvent,
) -> AsyncGenerator[ManyResult[Any], None]:
    """The results of ``execute_many_ray`` over the batch's inputs."""
    from ..ray import execute_many_ray

    ray: Any = importlib.import_module("ray")
    workers = args.workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    view.note(f"running on the Ray cluster at {args.ray} with {workers} worker(s)")
    return execute_many_ray(
        agent,
        read_inputs(path, agent),
        workers=workers,
        concurrency=concurrency,
        journal=args.output,
        transport=transport,
        abort_event=abort,
    )
