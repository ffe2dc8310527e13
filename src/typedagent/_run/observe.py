"""The loop's seam for what watches every execution from outside: observers that wrap its work.

The loop imports no observability code. Tracing and logging register a ``RunObserver`` (``add_observer``, done
once by ``typedagent/__init__.py``): it wraps the execution, each model call and each tool call, as stamina's
hooks wrap the work they observe.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from .._shared.events import FallbackSwitch
    from .._shared.pausing import ExecutePaused, PausableResult
    from .._shared.results import AttemptRecord
    from .execution import Execution
    from .reply import Reply

__all__ = ["Observers", "RunObserver", "add_observer", "observers"]

T = TypeVar("T")


class RunObserver(Protocol):
    """Wraps an execution's work to watch it (spans, log lines); each method returns what the loop then awaits.

    An observer with nothing to do returns the awaitable it was given, so watching nothing costs a call.
    """

    def execution(
        self, execution: Execution, run: Callable[[Execution], Awaitable[PausableResult[Any]]]
    ) -> Awaitable[PausableResult[Any]]:
        """The whole execution: ``run(execution)`` gives its result."""
        ...

    def model_call(self, execution: Execution, params: dict[str, Any], call: Awaitable[T]) -> Awaitable[T]:
        """One model call with the request ``params``: ``call`` gives the response or the failure."""
        ...

    def tool_call(self, reply: Reply, work: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """One tool call, answered in ``reply``: ``work()`` runs it."""
        ...

    def attempt_ended(self, record: AttemptRecord) -> None:
        """An attempt ended as ``record`` says."""
        ...

    def paused(self, execution: Execution, result: ExecutePaused) -> None:
        """The execution pauses, handing over ``result`` (called inside ``execution(...)``'s work).

        A resumed execution is ``execution(...)`` again, with ``execution.pauses`` above 0 and ``execution.trace``
        holding what the first segment's observer put there (a W3C ``traceparent``), to link to.
        """
        ...

    def fell_back(self, execution: Execution, event: FallbackSwitch) -> None:
        """The execution's model calls move to another model of its fallback chain (before that call is made)."""
        ...


class Observers:
    """The registered observers, applied in the order they were added (the first wraps innermost)."""

    __slots__ = ("_all",)

    def __init__(self) -> None:
        self._all: tuple[RunObserver, ...] = ()

    def add(self, observer: RunObserver) -> None:
        """Watch every execution that starts from now on with ``observer`` too."""
        self._all = (*self._all, observer)

    def execution(
        self, execution: Execution, run: Callable[[Execution], Awaitable[PausableResult[Any]]]
    ) -> Awaitable[PausableResult[Any]]:
        """The execution, wrapped by every observer."""
        for observer in self._all:
            run = _bind(observer, run)
        return run(execution)

    def model_call(self, execution: Execution, params: dict[str, Any], call: Awaitable[T]) -> Awaitable[T]:
        """A model call, wrapped by every observer."""
        for observer in self._all:
            call = observer.model_call(execution, params, call)
        return call

    def tool_call(self, reply: Reply, work: Callable[[], Awaitable[T]]) -> Awaitable[T]:
        """A tool call, wrapped by every observer."""
        for observer in self._all[:-1]:
            work = _defer(observer, reply, work)
        return self._all[-1].tool_call(reply, work) if self._all else work()

    def attempt_ended(self, record: AttemptRecord) -> None:
        """An attempt's end, told to every observer."""
        for observer in self._all:
            observer.attempt_ended(record)

    def paused(self, execution: Execution, result: ExecutePaused) -> None:
        """A pause, told to every observer."""
        for observer in self._all:
            observer.paused(execution, result)

    def fell_back(self, execution: Execution, event: FallbackSwitch) -> None:
        """A switch to another model of the fallback chain, told to every observer."""
        for observer in self._all:
            observer.fell_back(execution, event)


def _bind(
    observer: RunObserver, run: Callable[[Execution], Awaitable[PausableResult[Any]]]
) -> Callable[[Execution], Awaitable[PausableResult[Any]]]:
    return lambda execution: observer.execution(execution, run)


def _defer(observer: RunObserver, reply: Reply, work: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
    return lambda: observer.tool_call(reply, work)


observers = Observers()
"""Every execution's observers."""


def add_observer(observer: RunObserver) -> None:
    """Watch every execution that starts from now on with ``observer``."""
    observers.add(observer)
