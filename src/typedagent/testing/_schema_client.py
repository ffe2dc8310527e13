"""``SchemaClient``, which answers any agent on its own from its tools' schemas, and ``use_client``."""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Coroutine, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .._agent.output import SUBMIT_TOOL_NAME
from .._api.client import CLIENT_IN_CONTEXT, MessagesClient
from .._run.arguments import check_client
from ._items import Block, ScriptError, ScriptItem, response, submit_call, text, tool_call
from ._render import answer_schema
from ._schema_values import RandomChooser, SchemaValueError, generate
from ._scripted import _InProcessClient

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["SchemaClient", "use_client"]

ClientT = TypeVar("ClientT", bound=MessagesClient)


class SchemaClient(_InProcessClient):
    """A client that plays the model for any agent, with no script: made-up, schema-valid tool calls.

    Each execution it serves goes: one response calling every helper once, with arguments made up from the
    helper's input schema; then the output tool, with an input made up from its schema (in reflection mode,
    then ``submit``). For an agent in ``"native"`` or ``"prompted"`` mode the output is a text answer instead:
    JSON made up from the request's ``output_config.format`` schema, or from the schema in its system prompt. After
    a rejection it hands over a new output. A forced ``tool_choice`` is obeyed (``none``: the text answer).
    What it makes up depends only on ``seed`` and on how far the conversation has got, so a test sees the
    same values every run, even with executions running concurrently. Like pydantic-ai's ``TestModel``: a
    smoke test that the agent's tools and output type hold together, with no script to write.

    The values are valid for the JSON schema sent to the API, and for strict schemas (strict tools, native output)
    the numeric limits ``transform_schema`` moves into descriptions are kept too; checks only pydantic sees (a
    ``model_validator``, a ``pattern`` of a strict schema) may reject them, and the next attempt gets another value.

    Args:
        seed: Picks the values; the same seed makes the same values.
    """

    _source = "SchemaClient"
    _message_prefix = "msg_schema"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.seed = seed

    def _respond(self, request: dict[str, Any], call: int) -> Coroutine[Any, Any, Message]:
        return self._serve_item(self._answer(request), request, call)

    def _answer(self, request: Mapping[str, Any]) -> ScriptItem:
        tools = [tool for tool in request.get("tools") or () if isinstance(tool.get("input_schema"), Mapping)]
        callable_names = [tool["name"] for tool in tools if tool["name"] != SUBMIT_TOOL_NAME]
        in_text = answer_schema(request)
        if not callable_names and in_text is None:
            raise ScriptError(
                f"{self._source}: the request offers no tool to call, so there is no output to hand over."
            )
        schemas = {tool["name"]: tool["input_schema"] for tool in tools}
        messages: Sequence[Mapping[str, Any]] = request.get("messages") or ()
        turn = sum(message.get("role") == "assistant" for message in messages)
        chooser = RandomChooser(random.Random(f"{self.seed}:{turn}"))

        def call(name: str) -> Block:
            try:
                return tool_call(name, generate(schemas[name], chooser))
            except SchemaValueError as exc:
                raise ScriptError(f"{self._source}: cannot make up an input for tool {name!r}: {exc}") from exc

        forced: Mapping[str, Any] = request.get("tool_choice") or {}
        if forced.get("type") == "tool":
            return submit_call() if forced["name"] == SUBMIT_TOOL_NAME else call(forced["name"])
        # The output tool is the last tool offered; an agent answering in text (native, prompted) offers none.
        helper_names = callable_names if in_text is not None else callable_names[:-1]
        called = {name for message in messages for name in _tool_names(message)}
        helpers = [name for name in helper_names if name not in called]
        if helpers and forced.get("type") != "none":
            return response(*(call(name) for name in helpers))
        if in_text is not None:
            if SUBMIT_TOOL_NAME in schemas and forced.get("type") != "none" and _answer_previewed(messages):
                return submit_call()
            return self._text_answer(in_text, chooser)
        output = callable_names[-1]
        if SUBMIT_TOOL_NAME in schemas and _previewed(messages, output):
            return submit_call()
        return call(output)

    def _text_answer(self, schema: Mapping[str, Any], chooser: RandomChooser) -> Block:
        try:
            return text(json.dumps(generate(schema, chooser)))
        except SchemaValueError as exc:
            raise ScriptError(f"{self._source}: cannot make up an answer for the output schema: {exc}") from exc


def _tool_names(message: Mapping[str, Any]) -> list[str]:
    if message.get("role") != "assistant" or isinstance(message.get("content"), str):
        return []
    return [block["name"] for block in message.get("content") or () if block.get("type") == "tool_use"]


def _answer_previewed(messages: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the last response was a text answer, and what came back is its preview rather than an error."""
    if len(messages) < 2 or messages[-2].get("role") != "assistant" or _tool_names(messages[-2]):
        return False
    told = messages[-1].get("content")
    texts = [told] if isinstance(told, str) else [block.get("text", "") for block in told or () if "text" in block]
    return bool(texts) and not texts[-1].startswith("Error")


def _previewed(messages: Sequence[Mapping[str, Any]], output: str) -> bool:
    """Whether the last response called the output tool and its call was answered without an error."""
    if len(messages) < 2 or messages[-2].get("role") != "assistant" or output not in _tool_names(messages[-2]):
        return False
    ids = {block["id"] for block in messages[-2]["content"] if block.get("name") == output}
    answered = messages[-1].get("content")
    results = [] if isinstance(answered, str) else list(answered or ())
    return any(block.get("tool_use_id") in ids and not block.get("is_error") for block in results)


@contextlib.contextmanager
def use_client(client: ClientT) -> Generator[ClientT]:
    """Make ``client`` the client of every ``execute_agent`` without ``client=`` inside the ``with`` block.

    For testing application code that runs agents deep inside, where passing a client down is not an option.
    An explicit ``client=`` still wins. It holds for the current thread and what runs in its context:
    ``await``-ed code, tasks it creates, ``asyncio.to_thread``, and ``execute_agent_sync`` (which runs its work in a
    copy of the calling context). A ``threading.Thread`` or a thread-pool worker you start yourself does not see it:
    call ``use_client`` inside that thread, or run the thread's work with ``contextvars.copy_context().run``.
    Blocks nest; the innermost client wins.

    Args:
        client: Anything with an async ``messages.create``: a testing client, or a real ``AsyncAnthropic``.

    Yields:
        The client, for assertions on it (``with use_client(SchemaClient()) as model:``).

    Raises:
        TypeError: ``client`` cannot be a client (no async ``messages.create``).
    """
    check_client(client)
    token = CLIENT_IN_CONTEXT.set(client)
    try:
        yield client
    finally:
        CLIENT_IN_CONTEXT.reset(token)
