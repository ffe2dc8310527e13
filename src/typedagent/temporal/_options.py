"""The checks on a ``TemporalAgent``'s activity options, made when it wraps an agent.

A mistyped option is not refused by Temporal until the workflow schedules an activity with it, and there it fails
the workflow task, again and again, forever: the workflow hangs. So each option is checked here, at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final, cast

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy

__all__ = ["check_activity_config", "check_closes", "check_tool_activity_config"]

_TYPES: Final[dict[str, tuple[type[Any], str]]] = {
    "task_queue": (str, "a str"),
    "schedule_to_close_timeout": (timedelta, "a datetime.timedelta"),
    "schedule_to_start_timeout": (timedelta, "a datetime.timedelta"),
    "start_to_close_timeout": (timedelta, "a datetime.timedelta"),
    "heartbeat_timeout": (timedelta, "a datetime.timedelta"),
    "retry_policy": (RetryPolicy, "a temporalio.common.RetryPolicy"),
    "cancellation_type": (workflow.ActivityCancellationType, "a workflow.ActivityCancellationType"),
    "versioning_intent": (workflow.VersioningIntent, "a workflow.VersioningIntent"),
    "summary": (str, "a str"),
    "priority": (Priority, "a temporalio.common.Priority"),
}
"""What each option of ``workflow.ActivityConfig`` takes (None too, but for ``cancellation_type`` and ``priority``)."""

_KNOWN: Final = ", ".join(sorted(workflow.ActivityConfig.__optional_keys__))


def check_tool_activity_config(config: object) -> dict[str, workflow.ActivityConfig]:
    """``tool_activity_config`` as a dict, each tool's options checked (the tools' names are checked by the caller).

    Raises:
        TypeError: it is not a dict of tool name to options, or an option has the wrong type.
        ValueError: an option Temporal does not know, or a value out of range.
    """
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(
            "tool_activity_config must be a dict of helper tool name to activity options "
            f"({{'tool name': {{'start_to_close_timeout': timedelta(...)}}}}), got {type(config).__name__}."
        )
    tools: dict[str, workflow.ActivityConfig] = {}
    for tool, options in cast("Mapping[str, object]", config).items():
        tools[tool] = check_activity_config(options, f"tool_activity_config[{tool!r}]")
    return tools


def check_activity_config(config: object, where: str = "activity_config") -> workflow.ActivityConfig:
    """``config`` checked as Temporal's activity options (``workflow.ActivityConfig``).

    Raises:
        TypeError: it is not a dict, or an option has the wrong type.
        ValueError: an option Temporal does not know, one typedagent sets itself, or a timeout not above zero.
    """
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise TypeError(
            f"{where} must be a dict of Temporal's activity options (workflow.ActivityConfig), e.g. "
            f"{{'start_to_close_timeout': timedelta(minutes=5)}}, got {type(config).__name__}."
        )
    options = cast("Mapping[object, object]", config)
    for key, value in options.items():
        _check_option(where, key, value)
    return cast("workflow.ActivityConfig", dict(options))  # each option checked above


def check_closes(config: workflow.ActivityConfig, where: str) -> None:
    """Temporal needs one of the two close timeouts on every activity: refuse options (merged) without one.

    Raises:
        ValueError: neither ``start_to_close_timeout`` nor ``schedule_to_close_timeout`` is set.
    """
    if config.get("start_to_close_timeout") is None and config.get("schedule_to_close_timeout") is None:
        raise ValueError(
            f"{where} leaves the activities without start_to_close_timeout or schedule_to_close_timeout (Temporal "
            "needs one): set one to a timedelta, or leave start_to_close_timeout out to keep the default (10 minutes)."
        )


def _check_option(where: str, key: object, value: object) -> None:
    if key not in workflow.ActivityConfig.__optional_keys__:
        raise ValueError(
            f"{where} has an option Temporal does not know: {key!r}; its options (workflow.ActivityConfig) are "
            f"{_KNOWN}."
        )
    if key == "activity_id":
        raise ValueError(
            "activity option 'activity_id' cannot be set: typedagent starts many activities (one per model call and "
            "per tool call), each with an id of its own that Temporal makes; leave it out."
        )
    if key == "event_groups":
        return  # a sequence of Temporal's event groups, checked by Temporal when the workflow starts
    kind, label = _TYPES[str(key)]
    if value is None and key not in ("cancellation_type", "priority"):
        return
    if not isinstance(value, kind):
        got = f"{type(value).__name__}: {value!r}"
        hint = ""
        if kind is timedelta and isinstance(value, (int, float)):
            hint = f" (write timedelta(seconds={value!r}))"
        elif kind is RetryPolicy and isinstance(value, Mapping):
            fields = ", ".join(f"{name}={option!r}" for name, option in cast("Mapping[str, object]", value).items())
            hint = f" (write RetryPolicy({fields}))"
        raise TypeError(f"activity option {key!r} must be {label}, got {got}{hint}.")
    if isinstance(value, timedelta) and value <= timedelta(0):
        raise ValueError(
            f"activity option {key!r} must be more than zero, got {value}; leave it out (or None) for no limit."
        )
    if isinstance(value, RetryPolicy):
        try:
            value._validate()  # Temporal's own check of a RetryPolicy
        except ValueError as exc:
            raise ValueError(f"activity option 'retry_policy' is not a valid RetryPolicy: {exc}.") from None
