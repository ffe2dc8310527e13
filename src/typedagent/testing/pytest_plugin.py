"""pytest plugin for typedagent, loaded wherever typedagent is installed (``pytest11`` entry point).

Fixtures:
    captured_spans: the OpenTelemetry spans the test's executions finish, in an ``InMemorySpanExporter``.
    scripted_client: an empty ``ScriptedClient``; add responses with ``.add(...)``.
    fake_anthropic_server: a running ``FakeAnthropicServer`` with an empty script.
    cassette: this test's cassette client: a ``ReplayClient`` by default, a ``RecordingClient``
        around ``cassette_real_client`` with ``--record-cassettes``.
    cassette_path: where that cassette lives (``cassettes/<test module>/<test name>.json`` next to
        the test file); override it to move cassettes.
    cassette_real_client: the client used to record (``AsyncAnthropic()``); override it for Bedrock,
        Vertex or client options.

Eval suites: files named ``*.eval.yaml`` (or ``.eval.yml``, ``.eval.json``) are collected as tests,
one per case plus one for the suite's threshold (see ``typedagent.evals``).

Blocking real model requests is opt-in, so the plugin never changes tests that do not ask for it:
a blocked test fails on any request through the ``anthropic`` SDK's HTTP transports to a host that
is not loopback. Requests are blocked in tests that use ``scripted_client``, ``fake_anthropic_server``
or ``cassette`` (replaying), in tests marked ``@pytest.mark.block_model_requests`` (or whose module
or class is), and in every test when the pytest configuration sets
``typedagent_block_model_requests = true``. ``@pytest.mark.allow_model_requests``,
``--allow-model-requests`` and ``--record-cassettes`` (for tests using ``cassette``) lift the block.
Loopback servers (``FakeAnthropicServer``) and ``httpx2.MockTransport`` are never blocked.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.outcomes import Failed  # pytest.fail.Exception, importable here with its type

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from .._api.client import MessagesClient
    from ._cassette import RecordingClient, ReplayClient
    from ._scripted import ScriptedClient
    from ._server import FakeAnthropicServer

__all__ = ["ModelRequestBlocked"]

_LOOPBACK = frozenset({"localhost", "::1", "[::1]"})
_OFFLINE_FIXTURES = frozenset({"scripted_client", "fake_anthropic_server", "cassette"})
"""Fixtures that make a test a typedagent offline test: using one blocks real model requests."""
_CALL_FAILED = pytest.StashKey[bool]()
_AIOHTTP_TRANSPORT = "anthropic._vendor.httpx_aiohttp.transport"


class ModelRequestBlocked(Failed):
    """A test tried to reach a real model API.

    A pytest failure (not an ``Exception``), so neither the SDK's retries nor the agent loop turn it
    into an ``API_ERROR`` result: the test fails with this message.
    """


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the typedagent options."""
    group = parser.getgroup("typedagent")
    group.addoption(
        "--record-cassettes",
        action="store_true",
        help="typedagent: record the cassette of tests using the 'cassette' fixture through a real client "
        "(needs ANTHROPIC_API_KEY) instead of replaying it.",
    )
    group.addoption(
        "--allow-model-requests",
        action="store_true",
        help="typedagent: let every test send requests to real model APIs, even where they are blocked.",
    )
    parser.addini(
        "typedagent_block_model_requests",
        type="bool",
        default=False,
        help="typedagent: fail every test that sends a request to a real model API (default false: only tests "
        "marked block_model_requests or using typedagent's offline fixtures).",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers."""
    config.addinivalue_line(
        "markers",
        "block_model_requests: fail this test if it sends a request to a real model API (typedagent).",
    )
    config.addinivalue_line(
        "markers",
        "allow_model_requests: let this test send requests to real model APIs where typedagent would block them.",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect eval suites (``*.eval.yaml``): one test per case."""
    if not file_path.name.endswith((".eval.yaml", ".eval.yml", ".eval.json")):
        return None
    from ._eval_suites import EvalFile

    return EvalFile.from_parent(parent, path=file_path)  # pyright: ignore[reportUnknownMemberType]


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember whether the test body failed, so teardown checks do not pile errors on a failure."""
    report = yield
    if report.when == "call":
        item.stash[_CALL_FAILED] = report.failed
    return report


def _blocks_requests(request: pytest.FixtureRequest) -> bool:
    """Whether this test opted in to blocking real model requests, and nothing lifts the block."""
    config, node = request.config, request.node
    fixtures = set(request.fixturenames)
    if (
        config.getoption("allow_model_requests")
        or node.get_closest_marker("allow_model_requests") is not None
        or (config.getoption("record_cassettes") and "cassette" in fixtures)
    ):
        return False
    return bool(
        config.getini("typedagent_block_model_requests")
        or node.get_closest_marker("block_model_requests") is not None
        or fixtures & _OFFLINE_FIXTURES
    )


def _is_loopback(host: str) -> bool:
    return host in _LOOPBACK or host.startswith("127.")


def _check(url: Any, test: str) -> None:
    if _is_loopback(url.host):
        return
    raise ModelRequestBlocked(
        f"typedagent blocked a real model request to {url.scheme}://{url.host}{url.path} in {test}.\n"
        "Tests run offline: answer with typedagent.testing (ScriptedClient, FunctionClient, a cassette, or "
        "FakeAnthropicServer on 127.0.0.1). To allow real requests, mark the test with "
        "@pytest.mark.allow_model_requests, or run pytest with --allow-model-requests.",
        pytrace=False,
    )


def _guard_async(original: Callable[..., Any], test: str) -> Callable[..., Any]:
    async def handle_async_request(self: Any, request: Any) -> Any:
        _check(request.url, test)
        return await original(self, request)

    return handle_async_request


def _guard_sync(original: Callable[..., Any], test: str) -> Callable[..., Any]:
    def handle_request(self: Any, request: Any) -> Any:
        _check(request.url, test)
        return original(self, request)

    return handle_request


@pytest.fixture(autouse=True)
def _typedagent_block_model_requests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test when it sends a request to a real model API, where it opted in (see the module docstring)."""
    if not _blocks_requests(request):
        return
    test = request.node.nodeid
    for cls, name, guard in _transports():
        monkeypatch.setattr(cls, name, guard(getattr(cls, name), test))


def _transports() -> list[tuple[type[Any], str, Callable[[Callable[..., Any], str], Callable[..., Any]]]]:
    """The HTTP transports that reach the network, with the method to guard and its guard."""
    import httpx2

    transports: list[tuple[type[Any], str, Callable[[Callable[..., Any], str], Callable[..., Any]]]] = [
        (httpx2.AsyncHTTPTransport, "handle_async_request", _guard_async),
        (httpx2.HTTPTransport, "handle_request", _guard_sync),
    ]
    aiohttp = sys.modules.get(_AIOHTTP_TRANSPORT)  # the SDK's aiohttp backend, loaded with the SDK when installed
    if aiohttp is not None:
        transports.append((aiohttp.AiohttpTransport, "handle_async_request", _guard_async))
    return transports


@pytest.fixture
def scripted_client() -> ScriptedClient:
    """An empty ``ScriptedClient`` for the test; add responses with ``.add(...)``."""
    from ._scripted import ScriptedClient

    return ScriptedClient()


@pytest.fixture
def fake_anthropic_server(request: pytest.FixtureRequest) -> Iterator[FakeAnthropicServer]:
    """A running ``FakeAnthropicServer`` with an empty script; add items with ``.add(...)``.

    Unanswerable requests (see ``FakeAnthropicServer.problems``) fail the test at teardown.
    """
    from ._server import FakeAnthropicServer

    server = FakeAnthropicServer().start()
    yield server
    server.stop()
    if not request.node.stash.get(_CALL_FAILED, False):
        server._raise_problems(None)


@pytest.fixture
def captured_spans() -> Iterator[InMemorySpanExporter]:
    """The OpenTelemetry spans this test's executions finish, kept in memory (needs ``opentelemetry-sdk``).

    typedagent's spans, and those of the SDK clients it calls, go to a tracer provider of the test's own
    (content stays off, as by default); ``captured_spans.get_finished_spans()`` lists them in the order they ended.
    """
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from .._observability.settings import Settings, swap_settings

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    previous = swap_settings(Settings(tracer_provider=provider))
    yield exporter
    swap_settings(previous)
    provider.shutdown()


@pytest.fixture
def cassette_path(request: pytest.FixtureRequest) -> Path:
    """This test's cassette: ``cassettes/<test module>/<test name>.json`` next to the test file."""
    name = re.sub(r"[^\w.-]+", "_", request.node.name).strip("_")
    return request.path.parent / "cassettes" / request.path.stem / f"{name}.json"


@pytest.fixture
def cassette_real_client() -> MessagesClient:
    """The client that records cassettes: ``AsyncAnthropic()`` (reads ``ANTHROPIC_API_KEY``)."""
    from anthropic import AsyncAnthropic

    return AsyncAnthropic()


@pytest.fixture
def cassette(request: pytest.FixtureRequest, cassette_path: Path) -> Iterator[RecordingClient | ReplayClient]:
    """This test's cassette client: replays ``cassette_path``, or records it with ``--record-cassettes``.

    On replay, recorded calls the test never made fail it at teardown (the agent makes fewer calls).
    """
    from ._cassette import RecordingClient, ReplayClient

    if request.config.getoption("record_cassettes"):
        recorder = RecordingClient(request.getfixturevalue("cassette_real_client"), cassette_path)
        yield recorder
        recorder.save()  # also when no call was made, so the replay expects none
        return
    replay = ReplayClient(cassette_path)
    yield replay
    if not request.node.stash.get(_CALL_FAILED, False):
        replay.assert_all_played()
