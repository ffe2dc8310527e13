"""What an execution returns: the typed result, its metadata and the per-attempt records."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, NoReturn, TypeAlias, cast

from typing_extensions import TypeVar

from . import errors_json  # gives AgentError its pydantic schema  # noqa: F401  # pyright: ignore[reportUnusedImport]
from .errors import AgentError, AgentErrorCode, AgentExecutionError
from .generics import subscriptable
from .usage import COUNTERS, ONE_HOUR_WRITES, REQUEST_COUNTERS, read_usage

if TYPE_CHECKING:
    from anthropic.types import MessageParam, Usage
else:
    # What pydantic reads in these annotations (Temporal's pydantic data converter carries results): the
    # conversation as JSON objects, without importing the SDK here.
    MessageParam = dict[str, Any]

__all__ = [
    "AttemptOutcome",
    "AttemptRecord",
    "CallbackError",
    "ExecuteFailure",
    "ExecuteResult",
    "ExecuteSuccess",
    "ExecutionMetadata",
    "SubExecution",
    "TokenUsage",
]

OutputT_co = TypeVar("OutputT_co", covariant=True)


@dataclass(frozen=True, kw_only=True, slots=True)
class TokenUsage:
    """Token counts and server tool requests, summed over API responses."""

    input_tokens: int = 0
    """Uncached input tokens."""
    output_tokens: int = 0
    """Output tokens (thinking included)."""
    cache_creation_input_tokens: int = 0
    """Input tokens written to the prompt cache (to the 5-minute and the 1-hour cache)."""
    cache_read_input_tokens: int = 0
    """Input tokens read from the prompt cache."""
    web_search_requests: int = 0
    """Web searches the API ran for the model (``usage.server_tool_use``; billed per search)."""
    web_fetch_requests: int = 0
    """Web pages the API fetched for the model (``usage.server_tool_use``)."""
    cache_creation_1h_input_tokens: int = 0
    """Of ``cache_creation_input_tokens``, those written to the 1-hour cache (``usage.cache_creation``;
    ``define_agent(prompt_caching="1h")``), which cost more to write than 5-minute ones."""

    @property
    def cache_creation_5m_input_tokens(self) -> int:
        """Of ``cache_creation_input_tokens``, those written to the 5-minute cache."""
        return self.cache_creation_input_tokens - self.cache_creation_1h_input_tokens

    @property
    def total(self) -> int:
        """The four token counters added up.

        Server tool requests are not tokens; 1-hour cache writes are among ``cache_creation_input_tokens``.
        """
        return self.input_tokens + self.output_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    def __add__(self, other: TokenUsage) -> TokenUsage:
        if not isinstance(other, TokenUsage):
            return NotImplemented
        return _counted(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.web_search_requests + other.web_search_requests,
            self.web_fetch_requests + other.web_fetch_requests,
            self.cache_creation_1h_input_tokens + other.cache_creation_1h_input_tokens,
        )

    @classmethod
    def from_usage(cls, usage: Usage | None) -> TokenUsage:
        """Build from a response's ``usage`` (``anthropic.types.Usage``, ``BetaUsage``, or its JSON).

        Missing, None and negative counters count as 0: a negative count is malformed usage, and counting it
        would make totals (and the token budget) go down. Tokens the API reports only per iteration
        (``usage.iterations``: a compaction, an advisor consultation) are added to the counters, since the
        top-level counters leave them out; ``web_search_requests`` and ``web_fetch_requests`` come from
        ``usage.server_tool_use``, ``cache_creation_1h_input_tokens`` from ``usage.cache_creation``.
        """
        if usage is None:
            return cls()
        return cls(**read_usage(usage))


_FIELDS: Final = (*COUNTERS, *REQUEST_COUNTERS, ONE_HOUR_WRITES)
_SETTERS: Final = tuple(getattr(TokenUsage, name).__set__ for name in _FIELDS)
_NEW: Final = object.__new__


def _counted(
    input_tokens: int, output_tokens: int, writes: int, reads: int, searches: int, fetches: int, one_hour: int
) -> TokenUsage:
    """``TokenUsage(...)`` from counts already checked, in ``_FIELDS`` order: set straight into its slots.

    Every response adds up two of them: this skips the frozen dataclass's keyword ``__init__`` (twice as slow).
    """
    usage: TokenUsage = _NEW(TokenUsage)
    set_input, set_output, set_writes, set_reads, set_searches, set_fetches, set_one_hour = _SETTERS
    set_input(usage, input_tokens)
    set_output(usage, output_tokens)
    set_writes(usage, writes)
    set_reads(usage, reads)
    set_searches(usage, searches)
    set_fetches(usage, fetches)
    set_one_hour(usage, one_hour)
    return usage


def used_since(total: TokenUsage, start: TokenUsage) -> TokenUsage:
    """What was counted from ``start`` to ``total`` (two totals of the same counts, ``start`` taken earlier)."""
    return _counted(
        total.input_tokens - start.input_tokens,
        total.output_tokens - start.output_tokens,
        total.cache_creation_input_tokens - start.cache_creation_input_tokens,
        total.cache_read_input_tokens - start.cache_read_input_tokens,
        total.web_search_requests - start.web_search_requests,
        total.web_fetch_requests - start.web_fetch_requests,
        total.cache_creation_1h_input_tokens - start.cache_creation_1h_input_tokens,
    )


def usual_usage(usage: object) -> TokenUsage | None:
    """The counts of an SDK ``Usage`` of the usual shape, read straight from its fields; None for any other.

    The usual shape: a pydantic model with nothing but its known fields (no ``iterations``), no server tool
    requests, counters that are None or non-negative ints, and a ``cache_creation`` split (if any) of the same.
    Anything else (a dict, an extra field, a negative or odd count) is for ``TokenUsage.from_usage``'s full reading.
    """
    found: object = getattr(usage, "__dict__", None)
    if type(found) is not dict or getattr(usage, "__pydantic_fields_set__", None) is None:
        return None
    get = cast("dict[str, Any]", found).get
    if getattr(usage, "__pydantic_extra__", None) or get("server_tool_use") is not None:
        return None
    if get("iterations") is not None:  # a separate inference (BetaUsage): priced at its own model's rates
        return None
    input_tokens, output_tokens = get("input_tokens"), get("output_tokens")
    writes, reads = get("cache_creation_input_tokens"), get("cache_read_input_tokens")
    if writes is None:
        writes = 0
    if reads is None:
        reads = 0
    if input_tokens is None:
        input_tokens = 0
    if output_tokens is None:
        output_tokens = 0
    if not (
        type(input_tokens) is int
        and type(output_tokens) is int
        and type(writes) is int
        and type(reads) is int
        and input_tokens >= 0
        and output_tokens >= 0
        and writes >= 0
        and reads >= 0
    ):
        return None
    split: Any = get("cache_creation")
    one_hour = 0
    if split is not None:
        split_found: object = getattr(split, "__dict__", None)
        if type(split_found) is not dict or getattr(split, "__pydantic_extra__", None):
            return None
        split_fields = cast("dict[str, object]", split_found)
        hour: object = split_fields.get("ephemeral_1h_input_tokens") or 0
        minutes: object = split_fields.get("ephemeral_5m_input_tokens") or 0
        if type(hour) is not int or type(minutes) is not int or hour < 0 or minutes < 0:
            return None
        if get("cache_creation_input_tokens") is None:
            writes = hour + minutes
        one_hour = min(hour, writes)
    return _counted(input_tokens, output_tokens, writes, reads, 0, 0, one_hour)


AttemptOutcome: TypeAlias = AgentErrorCode
"""How one attempt ended: ``AttemptOutcome.SUCCESS`` or the failure code it ended with.

The same enum as ``AgentErrorCode`` (one vocabulary for outcomes and codes), under the name that
reads well on attempt records.
"""


@dataclass(frozen=True, kw_only=True, slots=True)
class AttemptRecord:
    """One attempt (validation cycle) of an execution."""

    number: int
    """1-based attempt number."""
    iterations: int
    """API calls made in this attempt, failed ones included."""
    tokens: TokenUsage
    """Tokens of this attempt's responses, and of the sub-executions it started."""
    outcome: AttemptOutcome
    """How the attempt ended."""
    candidate: dict[str, Any] | None
    """The raw output-tool input that was validated (or the latest one seen), if any."""
    validation_errors: tuple[str, ...]
    """Every problem found with the candidate or the response ("field: message" form)."""
    output_forced: bool = False
    """The attempt reached its last iteration with ``force_output_on_last_iteration`` on, so that request
    forced the output (or ``submit``), or told the model it was its last turn when thinking forbids forcing."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CallbackError:
    """A callback that raised; the execution went on."""

    callback: str
    """Which hook (``on_tool_call``, …) and the callable's name, as ``hook (name)``."""
    error_type: str
    """Class name of the exception."""
    message: str
    """The exception's message."""

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecutionMetadata:
    """Accounting for one execution, present on success and failure alike."""

    model: str
    """Model the agent ran on: its ``model`` setting, as sent (an alias such as ``claude-sonnet-4-6``)."""
    response_model: str | None = None
    """The model that actually answered, as the last response named it (``response.model``: a dated id, or a
    fallback model); None when no response arrived."""
    tokens: TokenUsage
    """Summed over every API response of every iteration and attempt, the responses of its sub-executions
    included."""
    attempts: tuple[AttemptRecord, ...]
    """One record per attempt started."""
    iterations: int
    """API calls made in total, failed ones included, and those of its sub-executions."""
    latency_ms: float
    """Wall-clock duration of the execution (of a paused and resumed one: its running time, pauses left out)."""
    callback_errors: tuple[CallbackError, ...]
    """Callbacks that raised."""
    warnings: tuple[str, ...] = ()
    """Problems in your code the execution worked around (also logged on the ``typedagent`` logger), such
    as a reflection handler that returned something other than a ``str``."""
    messages: list[MessageParam]
    """The whole conversation as Messages API params, valid to send again (or to pass as
    ``message_history``)."""
    cost_usd: float | None = None
    """The estimated price of every response (its sub-executions' included), in US dollars, from the models' list
    prices (``register_price`` adds or replaces one); None when typedagent has no price for a model that ran."""
    tool_calls: int = 0
    """Helper calls run, in all attempts (the calls of its sub-agents are in their own metadata)."""
    pauses: int = 0
    """How many times the execution paused for decisions on tool calls (``pausable=True``) and was resumed."""
    cache_savings_usd: float | None = None
    """What prompt caching saved, in US dollars, estimated like ``cost_usd``: the cache reads priced at the input
    price less their read price, minus what the cache writes cost above the input price. Negative when the writes
    cost more than the reads saved (a single call, or a cache that expired between calls); None when typedagent
    has no price for a model that ran. Its sub-executions' savings are included, like their cost. ``tokens`` has
    the counts (``cache_read_input_tokens``, ``cache_creation_input_tokens``)."""
    models_used: tuple[str, ...] = ()
    """The model that answered each API call that got a response, in order (the model the response names, else
    the one asked): with ``define_agent(fallback=[...])``, where the execution's calls went. A sub-execution's
    calls are in its own metadata's ``models_used``, not here."""
    sub_executions: tuple[SubExecution, ...] = ()
    """The executions this one started: each agent it delegated to (``agent.as_tool()``) and each summariser a
    history processor ran (``typedagent.history.summarize_older``), in the order they ended. Their tokens, cost
    and API calls are already part of this execution's ``tokens``, ``cost_usd``, ``cache_savings_usd`` and
    ``iterations``."""


@dataclass(frozen=True, kw_only=True, slots=True)
class SubExecution:
    """One execution started by another: a sub-agent it delegated to, or a summariser of its history."""

    agent_name: str
    """The name of the agent that ran."""
    tool_call_id: str | None
    """The id of the parent's tool call that delegated (``agent.as_tool()``); None for a summariser run by a
    history processor."""
    ok: bool
    """Whether the sub-run handed over a valid output."""
    error_code: AgentErrorCode | None
    """Why it failed (its ``error.code``); None when it succeeded."""
    metadata: ExecutionMetadata
    """The sub-run's own metadata: its tokens, cost, attempts, conversation and its own ``sub_executions``."""


@subscriptable
@dataclass(frozen=True, kw_only=True, slots=True)
class ExecuteSuccess(Generic[OutputT_co]):
    """A validated output."""

    ok: Literal[True] = True
    """Always True: ``if result.ok:`` narrows to this class."""
    status: Literal["success"] = field(default="success", init=False)
    """Always ``"success"``: ``result.status`` tells the three results apart (``ExecutePaused`` is ``"paused"``)."""
    output: OutputT_co
    """The typed, validated output."""
    metadata: ExecutionMetadata
    """Tokens, attempts, conversation, …"""

    def unwrap(self) -> OutputT_co:
        """Return the output."""
        return self.output


@dataclass(frozen=True, kw_only=True, slots=True)
class ExecuteFailure:
    """An execution that ended without a valid output."""

    ok: Literal[False] = False
    """Always False."""
    status: Literal["failure"] = field(default="failure", init=False)
    """Always ``"failure"``."""
    error: AgentError
    """What went wrong, with typed context and the last candidate."""
    metadata: ExecutionMetadata
    """Tokens, attempts, conversation, …"""

    def unwrap(self) -> NoReturn:
        """Raise ``AgentExecutionError`` carrying this failure's error.

        Raises:
            AgentExecutionError: always.
        """
        raise AgentExecutionError(self.error)


ExecuteResult: TypeAlias = ExecuteSuccess[OutputT_co] | ExecuteFailure
"""What ``execute_agent`` returns; ``result.ok`` discriminates."""
