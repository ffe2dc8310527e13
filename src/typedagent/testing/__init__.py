"""Deterministic tests for typedagent agents, with no network and no API key.

- ``ScriptedClient`` answers from a script of responses built with the helpers here
  (``tool_call``, ``output_call``, ``submit_call``, ``text``, ``response``, ``api_error``, …, each a
  ``ScriptStep``) and records every request; ``FunctionClient`` answers with a function of the request
  (a ``MessagesRequest``). Both offer ``client.beta.messages.create`` too (requests with beta parameters).
- Server and MCP tool calls the API carries out are scripted as blocks of a response
  (``web_search_call``/``web_search_result``, ``web_fetch_*``, ``code_execution_*``, ``mcp_tool_*``,
  ``server_tool_call``/``server_tool_result``), a paused turn with ``pause_turn(...)``, a container with
  ``response(..., container=...)``, server tool requests and per-iteration usage with ``usage(...)`` and
  ``iteration_usage(...)``.
- ``RecordingClient`` / ``ReplayClient`` save and replay real conversations as JSON cassettes.
- ``FakeAnthropicServer`` serves the same scripts over real HTTP on 127.0.0.1, with fault injection
  and the API's rate limits (``ServerRateLimits``), so the ``anthropic`` SDK's retries and timeouts
  run end to end.
- ``conversation``, ``assert_valid_conversation`` and ``format_conversation`` inspect a run's
  conversation in assertions.
- ``SchemaClient`` plays the model for any agent with no script (made-up, schema-valid calls);
  ``use_client`` makes a client the default of every execution in a block; ``outputs(agent)`` is a
  hypothesis strategy of the agent's valid outputs.
- ``approve_all`` and ``deny_all`` decide a paused execution's calls (``execute_agent(..., pausable=True)``);
  the same scripted client answers the resumed execution where the paused one stopped.
"""

from ._cassette import CassetteError, RecordingClient, ReplayClient
from ._conversation import (
    Conversation,
    ConversationError,
    assert_valid_conversation,
    conversation,
    conversation_problems,
    format_conversation,
)
from ._decisions import approve_all, deny_all
from ._items import (
    ApiErrorSpec,
    Block,
    Delayed,
    MalformedBody,
    ScriptedResponse,
    ScriptError,
    ScriptItem,
    ScriptStep,
    api_error,
    delay,
    dropped_connection,
    iteration_usage,
    malformed_body,
    output_call,
    pause_turn,
    redacted_thinking,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
    usage,
)
from ._process import FakeAnthropicServerProcess
from ._ratelimit import ServerRateLimits
from ._redact import redact
from ._schema_client import SchemaClient, use_client
from ._script_json import script_from_json, script_to_json
from ._scripted import FunctionClient, FunctionReturn, MessagesRequest, ScriptedClient
from ._server import FakeAnthropicServer
from ._server_items import (
    code_execution_call,
    code_execution_result,
    mcp_tool_call,
    mcp_tool_result,
    server_tool_call,
    server_tool_result,
    web_fetch_call,
    web_fetch_result,
    web_search_call,
    web_search_result,
)
from ._strategies import outputs
from ._stream_script import ScriptedStream, StreamFault, stream_dropped, stream_error, stream_stalled

__all__ = [
    "ApiErrorSpec",
    "Block",
    "CassetteError",
    "Conversation",
    "ConversationError",
    "Delayed",
    "FakeAnthropicServer",
    "FakeAnthropicServerProcess",
    "FunctionClient",
    "FunctionReturn",
    "MalformedBody",
    "MessagesRequest",
    "RecordingClient",
    "ReplayClient",
    "SchemaClient",
    "ScriptError",
    "ScriptItem",
    "ScriptStep",
    "ScriptedClient",
    "ScriptedResponse",
    "ScriptedStream",
    "ServerRateLimits",
    "StreamFault",
    "api_error",
    "approve_all",
    "assert_valid_conversation",
    "code_execution_call",
    "code_execution_result",
    "conversation",
    "conversation_problems",
    "delay",
    "deny_all",
    "dropped_connection",
    "format_conversation",
    "iteration_usage",
    "malformed_body",
    "mcp_tool_call",
    "mcp_tool_result",
    "output_call",
    "outputs",
    "pause_turn",
    "redact",
    "redacted_thinking",
    "response",
    "script_from_json",
    "script_to_json",
    "server_tool_call",
    "server_tool_result",
    "stream_dropped",
    "stream_error",
    "stream_stalled",
    "submit_call",
    "text",
    "thinking",
    "tool_call",
    "usage",
    "use_client",
    "web_fetch_call",
    "web_fetch_result",
    "web_search_call",
    "web_search_result",
]
