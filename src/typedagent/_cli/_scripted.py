"""``--scripted``: the model's answers from the agent module's ``scripted_client()``, offline."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._agent.locate import Target, UsageError
from .._shared.events import AttemptStart, ExecuteCallbacks, ExecutionState

__all__ = ["FreshScripts", "scripted_factory"]


def scripted_factory(target: Target) -> Callable[[], Any]:
    """The module's ``scripted_client`` function.

    Raises:
        UsageError: the module defines none.
    """
    make_client: object = getattr(target.module, "scripted_client", None)
    if not callable(make_client):
        raise UsageError(
            f"--scripted: the module of {target.label} defines no scripted_client(); define one that returns a "
            "typedagent.testing client (ScriptedClient([...]), as the bundled examples do), or replay a recorded "
            "run with --replay CASSETTE"
        )
    return make_client


class FreshScripts:
    """A client whose every execution is answered by a fresh ``scripted_client()``: the script from its start.

    For ``typedagent batch --scripted``: the executions run one at a time, and the first attempt of each
    (its ``on_attempt_start``, from ``callbacks()``) takes a new client from ``make``. ``deps`` makes the
    deps of an input that gives none (the module's ``deps()``, as ``run --scripted`` uses it).
    """

    def __init__(self, make: Callable[[], Any], *, deps: Callable[[], Any] | None = None) -> None:
        self._make = make
        self.deps = deps
        self._current: Any = make()  # called once now, so a broken scripted_client() fails before any input
        self._fresh = True
        self.messages = _Route(self, beta=False)
        self.beta = _BetaRoute(self)
        """``beta.messages``: requests with beta parameters, answered by the same script."""

    def callbacks(self) -> ExecuteCallbacks:
        """The hook that gives each execution its own client."""
        return ExecuteCallbacks(on_attempt_start=self._attempt_start)

    def _attempt_start(self, state: ExecutionState, event: AttemptStart) -> None:
        if event.attempt == 1:
            if not self._fresh:
                self._current = self._make()
            self._fresh = False

    def _resource(self, beta: bool) -> Any:
        client = self._current
        return client.beta.messages if beta else client.messages


class _Route:
    def __init__(self, scripts: FreshScripts, *, beta: bool) -> None:
        self._scripts = scripts
        self._beta = beta

    def create(self, **params: Any) -> Any:
        return self._scripts._resource(self._beta).create(**params)


class _BetaRoute:
    def __init__(self, scripts: FreshScripts) -> None:
        self.messages = _Route(scripts, beta=True)
