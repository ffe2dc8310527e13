"""Deterministic tests for typedagent agents, with no network and no API key.

``ScriptedClient`` answers from a script of responses built with the helpers here and records every
request; ``assert_valid_conversation`` checks that a run's conversation is one the Messages API
accepts.
"""

from ._conversation import ConversationError, assert_valid_conversation, conversation_problems, format_conversation
from ._scripted import (
    ApiErrorSpec,
    Block,
    ScriptedClient,
    ScriptedResponse,
    ScriptError,
    ScriptItem,
    api_error,
    output_call,
    redacted_thinking,
    response,
    submit_call,
    text,
    thinking,
    tool_call,
    usage,
)

__all__ = [
    "ApiErrorSpec",
    "Block",
    "ConversationError",
    "ScriptError",
    "ScriptItem",
    "ScriptedClient",
    "ScriptedResponse",
    "api_error",
    "assert_valid_conversation",
    "conversation_problems",
    "format_conversation",
    "output_call",
    "redacted_thinking",
    "response",
    "submit_call",
    "text",
    "thinking",
    "tool_call",
    "usage",
]
