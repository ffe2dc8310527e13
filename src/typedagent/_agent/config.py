"""``ValidationConfig``: how hard an execution tries before giving up."""

from __future__ import annotations

from dataclasses import dataclass

from .._shared.errors import AgentDefinitionError

__all__ = ["ValidationConfig"]


def _check_count(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise AgentDefinitionError(f"ValidationConfig.{name} must be an int >= 1, got {value!r}.")


@dataclass(frozen=True, kw_only=True, slots=True)
class ValidationConfig:
    """How hard an execution tries before giving up."""

    max_attempts: int = 3
    """Validation cycles; each failed validation feeds its errors back and starts the next."""
    max_iterations_per_attempt: int = 15
    """API calls one attempt may make before the execution fails with ``MAX_ITERATIONS``."""
    force_output_on_last_iteration: bool = False
    """On the last iteration of an attempt, make the model hand over its output (``tool_choice`` forces the output
    tool, or ``submit`` when reflecting with a candidate; with extended thinking, a note says it is the last turn)."""

    def __post_init__(self) -> None:
        _check_count(self.max_attempts, "max_attempts")
        _check_count(self.max_iterations_per_attempt, "max_iterations_per_attempt")
        if not isinstance(self.force_output_on_last_iteration, bool):
            raise AgentDefinitionError(
                "ValidationConfig.force_output_on_last_iteration must be True or False, "
                f"got {self.force_output_on_last_iteration!r}."
            )
