"""typedagent: structured-output agents on the Anthropic Messages API, defined in typed code.

Define an agent once with ``define_agent()`` (a model, instructions, helper tools and one output tool
whose input is the typed result) and run it with ``execute_agent()``; the result is
``ExecuteSuccess[Output] | ExecuteFailure``, narrowed by ``if result.ok:``. With ``pausable=True`` an
execution may also pause at tool calls that wait for a person or an outside result (``ExecutePaused``),
and resume later from its stored state. ``execute_many()`` runs it on many inputs at once: bounded,
paced by the API's rate limits, resumable from a journal.
"""

from ._agent.context import RunContext
from ._agent.decorator import tool
from ._agent.definition import AgentDefinition, Instructions, ValidationConfig, Validator, define_agent
from ._agent.fallback import Alternative, FallbackPolicy
from ._agent.output import OutputTool
from ._agent.settings import ModelSettings
from ._agent.tools import Helper, HelperTool, Tool
from ._api.client import MessagesClient
from ._api.message_batches import MessageBatches
from ._api.pricing import ModelPrice, price_for, register_price
from ._api.ratelimit import RateLimits
from ._many.many import ManyResult, RunInput, execute_many, execute_many_sync
from ._observability.settings import instrument
from ._observability.tracing import TracingObserver as _TracingObserver
from ._run.execute import execute_agent
from ._run.observe import add_observer as _add_observer
from ._run.sync import execute_agent_sync
from ._shared.decisions import Approve, Decision, Deny, ExternalResult
from ._shared.errors import (
    AgentDefinitionError,
    AgentError,
    AgentErrorCode,
    AgentExecutionError,
    AlternativeFailure,
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    CostLimitContext,
    ErrorContext,
    HistoryProcessorErrorContext,
    JournalError,
    MaxIterationsContext,
    OutputRejected,
    Phase,
    RefusalContext,
    RequestLimitContext,
    TimeoutContext,
    TokenBudgetContext,
    ToolCallLimitContext,
    ToolsetErrorContext,
    ValidatorErrorContext,
)
from ._shared.events import (
    AttemptStart,
    Callback,
    ExecuteCallbacks,
    ExecutionState,
    FallbackSwitch,
    ModelResponse,
    ToolCall,
    ToolKind,
    ToolResult,
    ValidationFailure,
)
from ._shared.limits import AbortEvent, ExecutionLimits
from ._shared.pausing import ExecutePaused, PausableResult, PausedState, PendingCall
from ._shared.results import (
    AttemptOutcome,
    AttemptRecord,
    CallbackError,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    SubExecution,
    TokenUsage,
)
from ._shared.version import __version__
from ._streaming.events import (
    AgentStreamEvent,
    AttemptStarted,
    FallbackSwitched,
    Finished,
    Partial,
    PartialOutput,
    Paused,
    ReflectionPreview,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ValidationFailed,
)
from ._streaming.stream import AgentStream, stream_agent
from ._streaming.sync import SyncAgentStream, stream_agent_sync

# Spans and log lines watch every execution through the loop's observer seam: the loop never imports them.
_add_observer(_TracingObserver())

__all__ = [
    "AbortEvent",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentError",
    "AgentErrorCode",
    "AgentExecutionError",
    "AgentStream",
    "AgentStreamEvent",
    "Alternative",
    "AlternativeFailure",
    "ApiErrorContext",
    "Approve",
    "AttemptErrorsContext",
    "AttemptOutcome",
    "AttemptRecord",
    "AttemptStart",
    "AttemptStarted",
    "Callback",
    "CallbackError",
    "CancelledContext",
    "ContextWindowContext",
    "CostLimitContext",
    "Decision",
    "Deny",
    "ErrorContext",
    "ExecuteCallbacks",
    "ExecuteFailure",
    "ExecutePaused",
    "ExecuteResult",
    "ExecuteSuccess",
    "ExecutionLimits",
    "ExecutionMetadata",
    "ExecutionState",
    "ExternalResult",
    "FallbackPolicy",
    "FallbackSwitch",
    "FallbackSwitched",
    "Finished",
    "Helper",
    "HelperTool",
    "HistoryProcessorErrorContext",
    "Instructions",
    "JournalError",
    "ManyResult",
    "MaxIterationsContext",
    "MessageBatches",
    "MessagesClient",
    "ModelPrice",
    "ModelResponse",
    "ModelSettings",
    "OutputRejected",
    "OutputTool",
    "Partial",
    "PartialOutput",
    "PausableResult",
    "Paused",
    "PausedState",
    "PendingCall",
    "Phase",
    "RateLimits",
    "ReflectionPreview",
    "RefusalContext",
    "RequestLimitContext",
    "RunContext",
    "RunInput",
    "StreamEvent",
    "SubExecution",
    "SyncAgentStream",
    "TextDelta",
    "ThinkingDelta",
    "TimeoutContext",
    "TokenBudgetContext",
    "TokenUsage",
    "Tool",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallLimitContext",
    "ToolCallStarted",
    "ToolInputDelta",
    "ToolKind",
    "ToolResult",
    "ToolsetErrorContext",
    "ValidationConfig",
    "ValidationFailed",
    "ValidationFailure",
    "Validator",
    "ValidatorErrorContext",
    "__version__",
    "define_agent",
    "execute_agent",
    "execute_agent_sync",
    "execute_many",
    "execute_many_sync",
    "instrument",
    "price_for",
    "register_price",
    "stream_agent",
    "stream_agent_sync",
    "tool",
]
