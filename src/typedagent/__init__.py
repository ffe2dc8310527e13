"""typedagent: structured-output agents on the Anthropic Messages API, defined in typed code.

Define an agent once with ``define_agent()`` (a model, instructions, helper tools and one output tool
whose input is the typed result) and run it with ``execute_agent()``; the result is
``ExecuteSuccess[Output] | ExecuteFailure``, narrowed by ``if result.ok:``. ``execute_many()`` runs it on
many inputs at once: bounded, paced by the API's rate limits, resumable from a journal.
"""

from ._callbacks import (
    AttemptStart,
    Callback,
    ExecuteCallbacks,
    ExecutionState,
    ModelResponse,
    ToolCall,
    ToolKind,
    ToolResult,
    ValidationFailure,
)
from ._client import MessagesClient
from ._context import RunContext
from ._definition import AgentDefinition, Instructions, ValidationConfig, Validator, define_agent
from ._errors import (
    AgentDefinitionError,
    AgentError,
    AgentErrorCode,
    AgentExecutionError,
    ApiErrorContext,
    AttemptErrorsContext,
    CancelledContext,
    ContextWindowContext,
    CostLimitContext,
    ErrorContext,
    JournalError,
    MaxIterationsContext,
    OutputRejected,
    Phase,
    RefusalContext,
    RequestLimitContext,
    TimeoutContext,
    TokenBudgetContext,
    ToolCallLimitContext,
    ValidatorErrorContext,
)
from ._limits import AbortEvent, ExecutionLimits
from ._loop import execute_agent
from ._many import ManyResult, RunInput, execute_many, execute_many_sync
from ._output import OutputTool
from ._pricing import ModelPrice, price_for, register_price
from ._ratelimit import RateLimits
from ._results import (
    AttemptOutcome,
    AttemptRecord,
    CallbackError,
    ExecuteFailure,
    ExecuteResult,
    ExecuteSuccess,
    ExecutionMetadata,
    TokenUsage,
)
from ._stream_agent import AgentStream, stream_agent
from ._stream_events import (
    AgentStreamEvent,
    AttemptStarted,
    Finished,
    PartialOutput,
    ReflectionPreview,
    StreamEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolInputDelta,
    ValidationFailed,
)
from ._stream_sync import SyncAgentStream, stream_agent_sync
from ._sync import execute_agent_sync
from ._tools import Helper, HelperTool, Tool, tool
from ._tracing import instrument
from ._transport import MessageBatches

__version__ = "0.1.0"

__all__ = [
    "AbortEvent",
    "AgentDefinition",
    "AgentDefinitionError",
    "AgentError",
    "AgentErrorCode",
    "AgentExecutionError",
    "AgentStream",
    "AgentStreamEvent",
    "ApiErrorContext",
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
    "ErrorContext",
    "ExecuteCallbacks",
    "ExecuteFailure",
    "ExecuteResult",
    "ExecuteSuccess",
    "ExecutionLimits",
    "ExecutionMetadata",
    "ExecutionState",
    "Finished",
    "Helper",
    "HelperTool",
    "Instructions",
    "JournalError",
    "ManyResult",
    "MaxIterationsContext",
    "MessageBatches",
    "MessagesClient",
    "ModelPrice",
    "ModelResponse",
    "OutputRejected",
    "OutputTool",
    "PartialOutput",
    "Phase",
    "RateLimits",
    "ReflectionPreview",
    "RefusalContext",
    "RequestLimitContext",
    "RunContext",
    "RunInput",
    "StreamEvent",
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
