"""``SchemaClient`` answers any agent with made-up, schema-valid calls; ``use_client`` sets the default client."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, model_validator
from typing_extensions import TypedDict

from typedagent import (
    AgentErrorCode,
    OutputRejected,
    OutputTool,
    ValidationConfig,
    define_agent,
    execute_agent,
    execute_agent_sync,
    tool,
)
from typedagent._api.client import CLIENT_IN_CONTEXT
from typedagent.testing import (
    SchemaClient,
    ScriptedClient,
    ScriptError,
    assert_valid_conversation,
    output_call,
    use_client,
)


class Item(BaseModel):
    sku: str = Field(pattern=r"^[A-Z]{3}-\d{3}$")
    qty: int = Field(ge=1, le=99)
    note: str | None = None


class Node(BaseModel):
    label: str = Field(min_length=1)
    children: list[Node] = []


class Cat(BaseModel):
    kind: Literal["cat"] = "cat"
    lives: int = Field(ge=0, le=9)


class Dog(BaseModel):
    kind: Literal["dog"] = "dog"
    good: bool


class Level(Enum):
    LOW = "low"
    HIGH = "high"


class Movie(TypedDict):
    title: str
    year: int


ran: list[tuple[str, dict[str, Any]]] = []


@tool
def find_stock(sku: str, warehouse: Literal["north", "south"] = "north") -> str:
    """Stock of an item."""
    ran.append(("find_stock", {"sku": sku, "warehouse": warehouse}))
    return "12 in stock"


@tool
async def price_of(sku: str, quantity: int = 1) -> float:
    """Price of an item."""
    ran.append(("price_of", {"sku": sku, "quantity": quantity}))
    return 9.5


def agent_for(output: Any, **kwargs: Any) -> Any:
    return define_agent(name="smoke", model="claude-sonnet-4-6", output=output, **kwargs)


async def test_schema_client_calls_each_helper_once_then_the_output() -> None:
    """One response calls every helper with valid arguments; the next hands over a valid output."""
    ran.clear()
    agent = agent_for(OutputTool(list[Item]), helpers=[find_stock, price_of])
    model = SchemaClient(seed=3)
    result = await execute_agent(agent, "Restock the shelf.", client=model)
    assert result.ok is True
    assert all(isinstance(item, Item) for item in result.output)
    assert sorted(name for name, _ in ran) == ["find_stock", "price_of"]  # run together, in any order
    messages = result.metadata.messages
    assert_valid_conversation(messages)
    assert [[block["name"] for block in m["content"]] for m in messages if m["role"] == "assistant"] == [
        ["find_stock", "price_of"],
        ["final_output"],
    ]
    assert len(model.requests) == 2


@pytest.mark.parametrize(
    "form",
    [
        Item,
        Node,
        list[Item],
        int,
        str,
        bool,
        float,
        Literal["a", "b"],
        Level,
        Movie,
        Annotated[Cat | Dog, Field(discriminator="kind")],
        dict[str, int],
        Item | None,
    ],
    ids=lambda form: OutputTool(form).type_name,
)
async def test_schema_client_answers_every_output_type(form: Any) -> None:
    """Whatever the output type, the made-up output passes its validation on the first attempt."""
    for seed in range(5):
        result = await execute_agent(agent_for(OutputTool(form)), "go", client=SchemaClient(seed=seed))
        assert result.ok is True, result
        assert len(result.metadata.attempts) == 1
        assert OutputTool(form).checked(result.output) == result.output


async def test_schema_client_is_deterministic_for_a_seed() -> None:
    """The same seed makes the same values, even with executions running at once; another seed makes others."""
    agent = agent_for(OutputTool(Item), helpers=[find_stock])
    one, two = await asyncio.gather(
        execute_agent(agent, "go", client=SchemaClient(seed=1)), execute_agent(agent, "go", client=SchemaClient(seed=1))
    )
    shared = SchemaClient(seed=1)
    three, four = await asyncio.gather(
        execute_agent(agent, "go", client=shared), execute_agent(agent, "go", client=shared)
    )
    other = await execute_agent(agent, "go", client=SchemaClient(seed=2))
    outputs = [result.unwrap() for result in (one, two, three, four)]
    assert outputs == [outputs[0]] * 4
    assert other.unwrap() != outputs[0]


async def test_schema_client_reflection_hands_over_then_submits() -> None:
    """In reflection mode the output call is previewed, then submitted."""
    agent = agent_for(OutputTool(Item, reflection_handler=lambda item: f"{item.qty} x {item.sku}"))
    result = await execute_agent(agent, "go", client=SchemaClient())
    assert result.ok is True
    kinds = [m["content"][0]["name"] for m in result.metadata.messages if m["role"] == "assistant"]
    assert kinds == ["final_output", "submit"]


async def test_schema_client_hands_over_a_new_output_after_a_rejection() -> None:
    """A rejected output is followed by another made-up one in the next attempt."""

    def first_is_rejected(item: Item, ctx: Any) -> None:
        if ctx.attempt == 1:
            raise OutputRejected("try another")

    agent = agent_for(OutputTool(Item), validators=[first_is_rejected])
    result = await execute_agent(agent, "go", client=SchemaClient())
    assert result.ok is True
    first, second = result.metadata.attempts
    assert first.candidate != second.candidate


async def test_schema_client_obeys_a_forced_tool_choice() -> None:
    """When the request forces a tool (the last iteration under force_output_on_last_iteration), it calls that one."""
    validation = ValidationConfig(max_iterations_per_attempt=1, force_output_on_last_iteration=True)
    agent = agent_for(OutputTool(Item), helpers=[find_stock], validation=validation)
    result = await execute_agent(agent, "go", client=SchemaClient())
    assert result.ok is True
    assert result.metadata.iterations == 1

    reflecting = agent_for(
        OutputTool(Item, reflection_handler=lambda item: "ok"),
        validation=ValidationConfig(max_iterations_per_attempt=2, force_output_on_last_iteration=True),
    )
    model = SchemaClient()
    assert (await execute_agent(reflecting, "go", client=model)).ok is True
    assert model.requests[1]["tool_choice"] == {"type": "tool", "name": "submit"}


async def test_schema_client_says_when_it_cannot_make_up_an_input() -> None:
    """A pattern it cannot generate (a Unicode class Python's re does not read) fails the test with the tool's name."""

    class Odd(BaseModel):
        code: str = Field(pattern=r"^\p{Lu}{2}$")

    with pytest.raises(ScriptError, match=r"cannot make up an input for tool 'final_output': pattern .* is not a"):
        await execute_agent(agent_for(OutputTool(Odd)), "go", client=SchemaClient())
    with pytest.raises(ScriptError, match=r"cannot make up an answer for the output schema: pattern .* is not a"):
        await execute_agent(agent_for(OutputTool(Odd, mode="prompted")), "go", client=SchemaClient())
    with pytest.raises(ScriptError, match="offers no tool to call"):
        SchemaClient().messages.create(model="m", max_tokens=1, messages=[], tools=[])


async def test_schema_client_values_pydantic_alone_refuses_take_another_attempt() -> None:
    """Checks only pydantic sees (a model_validator) may refuse a made-up value; the next attempt brings another."""

    class Even(BaseModel):
        n: int = Field(ge=0, le=3)

        @model_validator(mode="after")
        def even(self) -> Even:
            if self.n % 2:
                raise ValueError("n must be even")
            return self

    agent = agent_for(OutputTool(Even), validation=ValidationConfig(max_attempts=10))
    result = await execute_agent(agent, "go", client=SchemaClient(seed=0))
    assert result.ok is True
    assert result.output.n % 2 == 0


async def test_use_client_is_the_default_of_every_execution_inside() -> None:
    """Inside the block an execution without client= uses the client; an explicit client still wins."""
    agent = agent_for(OutputTool(Item))
    explicit = ScriptedClient([output_call(Item(sku="ABC-123", qty=2))])
    with use_client(SchemaClient(seed=5)) as model:
        inner = await execute_agent(agent, "go")
        pinned = await execute_agent(agent, "go", client=explicit)
        with use_client(ScriptedClient([output_call(Item(sku="XYZ-999", qty=1))])) as nested:
            assert (await execute_agent(agent, "go")).unwrap() == Item(sku="XYZ-999", qty=1)
        assert len(nested.requests) == 1
    assert inner.ok is True
    assert len(model.requests) == 1
    assert pinned.unwrap() == Item(sku="ABC-123", qty=2)
    assert CLIENT_IN_CONTEXT.get() is None


def test_use_client_reaches_execute_agent_sync_and_copied_contexts_only() -> None:
    """execute_agent_sync sees the client; a thread sees it when it runs in a copy of the context, not otherwise."""
    agent = agent_for(OutputTool(int))
    seen: dict[str, object] = {}

    def in_thread(key: str) -> None:
        seen[key] = CLIENT_IN_CONTEXT.get()

    with use_client(SchemaClient()) as model:
        assert execute_agent_sync(agent, "go").ok is True
        plain = threading.Thread(target=in_thread, args=("plain",))
        copied = threading.Thread(target=contextvars.copy_context().run, args=(in_thread, "copied"))
        for thread in (plain, copied):
            thread.start()
            thread.join()
    assert seen == {"plain": None, "copied": model}


def test_use_client_rejects_what_cannot_be_a_client() -> None:
    """A value without an async messages.create is a TypeError at once, not a failure later."""
    with pytest.raises(TypeError, match=r"client must have an async messages\.create"), use_client(object()):  # type: ignore[type-var]
        pass
    assert CLIENT_IN_CONTEXT.get() is None


async def test_use_client_does_not_close_the_client() -> None:
    """Only a default client typedagent built itself is closed after the execution; a context client is not."""

    class Closing(ScriptedClient):
        closed = False

        async def close(self) -> None:
            self.closed = True

    client = Closing([output_call(3)])
    with use_client(client):
        assert (await execute_agent(agent_for(OutputTool(int)), "go")).unwrap() == 3
    assert client.closed is False


async def test_schema_client_failure_codes_stay_the_loops() -> None:
    """SchemaClient only plays the model: limits still apply and fail as usual."""
    from typedagent import ExecutionLimits

    agent = agent_for(OutputTool(Item), helpers=[find_stock])
    result = await execute_agent(agent, "go", client=SchemaClient(), limits=ExecutionLimits(max_requests=1))
    assert result.ok is False
    assert result.error.code is AgentErrorCode.REQUEST_LIMIT_EXCEEDED


TEXT_MODES = pytest.mark.parametrize("mode", ["native", "prompted"])


@TEXT_MODES
@pytest.mark.parametrize(
    "form",
    [
        Item,
        list[Item],
        int,
        Literal["a", "b"],
        Level,
        Movie,
        Annotated[Cat | Dog, Field(discriminator="kind")],
        Item | None,
    ],
    ids=lambda form: OutputTool(form).type_name,
)
async def test_schema_client_answers_text_modes_with_json_text(mode: Any, form: Any) -> None:
    """Native and prompted agents get a JSON text answer made up from the format or the prompt's schema, first time.

    Native schemas hold bounds only in their descriptions (``{minimum: 1, maximum: 99}``): they are kept too.
    """
    for seed in range(5):
        model = SchemaClient(seed=seed)
        result = await execute_agent(agent_for(OutputTool(form, mode=mode)), "go", client=model)
        assert result.ok is True, result
        assert len(result.metadata.attempts) == 1
        assert result.metadata.messages[-1]["content"][0]["type"] == "text"
        assert "tools" not in model.requests[0]


@TEXT_MODES
async def test_schema_client_text_mode_calls_helpers_then_answers(mode: Any) -> None:
    """Helpers first (every tool offered is a helper: there is no output tool), then the JSON answer."""
    ran.clear()
    agent = agent_for(OutputTool(Item, mode=mode), helpers=[find_stock, price_of])
    result = await execute_agent(agent, "go", client=SchemaClient(seed=1))
    assert result.ok is True
    assert sorted(name for name, _ in ran) == ["find_stock", "price_of"]
    assistant = [m["content"] for m in result.metadata.messages if m["role"] == "assistant"]
    assert [[block["type"] for block in content] for content in assistant] == [["tool_use", "tool_use"], ["text"]]


@TEXT_MODES
async def test_schema_client_text_reflection_answers_then_submits(mode: Any) -> None:
    """In reflection mode the answer is previewed, then submitted; a forced last turn is answered in text."""
    agent = agent_for(OutputTool(Item, mode=mode, reflection_handler=lambda item: f"{item.qty} x {item.sku}"))
    result = await execute_agent(agent, "go", client=SchemaClient())
    assert result.ok is True
    kinds = [m["content"][0]["type"] for m in result.metadata.messages if m["role"] == "assistant"]
    assert kinds == ["text", "tool_use"]

    forced = agent_for(
        OutputTool(Item, mode=mode, reflection_handler=str),
        helpers=[find_stock],
        validation=ValidationConfig(max_iterations_per_attempt=1, force_output_on_last_iteration=True),
    )
    model = SchemaClient()
    assert (await execute_agent(forced, "go", client=model)).ok is True
    assert model.requests[0]["tool_choice"] == {"type": "none"}


async def test_schema_client_text_answer_after_a_rejection_is_new() -> None:
    """A rejected answer (told as an error) is followed by a new answer, not a submit."""

    def first_is_rejected(item: Item, ctx: Any) -> None:
        if ctx.attempt == 1:
            raise OutputRejected("try another")

    agent = agent_for(OutputTool(Item, mode="native"), validators=[first_is_rejected])
    result = await execute_agent(agent, "go", client=SchemaClient())
    assert result.ok is True
    first, second = result.metadata.attempts
    assert first.candidate != second.candidate
