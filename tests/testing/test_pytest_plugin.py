"""The pytest plugin, run in inner pytest sessions with ``pytester``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import anthropic  # noqa: F401 - imported once here: inner sessions then find it loaded instead of re-importing it
import httpx2  # noqa: F401 - same
import pytest
from toolkit_support import run_inner as run

# The outer test must not block: the inner sessions decide for themselves what to block.
pytestmark = pytest.mark.allow_model_requests

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = function
filterwarnings = error
"""

CONFTEST = '''
import pytest
from pydantic import BaseModel
from typedagent import OutputTool, define_agent
from typedagent.testing import FunctionClient, output_call


class Answer(BaseModel):
    city: str


AGENT = define_agent(name="geo", model="claude-haiku-4-5", output=OutputTool(Answer, name="answer"))


@pytest.fixture
def cassette_real_client():
    """Records through a function instead of the real API."""
    return FunctionClient(lambda request: output_call({"city": request["messages"][0]["content"]}))
'''

REAL_CALLS = """
import anthropic
import pytest
from typedagent import execute_agent
from conftest import AGENT


async def test_async_client():
    await execute_agent(AGENT, "Paris", client=anthropic.AsyncAnthropic(api_key="k", max_retries=0))


def test_sync_client():
    anthropic.Anthropic(api_key="k").messages.create(model="m", max_tokens=1, messages=[])


async def test_aiohttp_client():
    async with anthropic.DefaultAioHttpClient() as http:
        client = anthropic.AsyncAnthropic(api_key="k", http_client=http, max_retries=0)
        await client.messages.create(model="m", max_tokens=1, messages=[])


@pytest.mark.allow_model_requests
def test_marked():
    client = anthropic.Anthropic(api_key="k", base_url="http://0.0.0.0:1", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model="m", max_tokens=1, messages=[])
"""


@pytest.fixture
def inner(pytester: pytest.Pytester) -> pytest.Pytester:
    """An inner project with the ini file and the conftest above."""
    pytester.makeini(INI)
    pytester.makeconftest(CONFTEST)
    return pytester


BLOCKING_INI = INI + "typedagent_block_model_requests = true\n"

REACHES_THE_TRANSPORT = """
import anthropic
import pytest


def test_reaches_the_transport():
    client = anthropic.Anthropic(api_key="k", base_url="http://0.0.0.0:1", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError):
        client.messages.create(model="m", max_tokens=1, messages=[])
"""


def test_plugin_leaves_tests_that_did_not_opt_in_alone(inner: pytest.Pytester) -> None:
    """Without the ini setting, the marker or a typedagent fixture, a project's own API tests reach the network."""
    inner.makepyfile(test_inner_unrelated=REACHES_THE_TRANSPORT)
    run(inner).assert_outcomes(passed=1)


def test_plugin_blocks_real_model_requests_where_the_project_opts_in(inner: pytest.Pytester) -> None:
    """With ``typedagent_block_model_requests = true``, requests to a real API fail the test with how to allow them."""
    inner.makeini(BLOCKING_INI)
    inner.makepyfile(test_inner_real=REAL_CALLS)
    result = run(inner)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*typedagent blocked a real model request to https://api.anthropic.com/v1/messages in "
            "test_inner_real.py::test_async_client.",
            "Tests run offline: answer with typedagent.testing (ScriptedClient, FunctionClient, a cassette, or "
            "FakeAnthropicServer on 127.0.0.1). To allow real requests, mark the test with "
            "@pytest.mark.allow_model_requests, or run pytest with --allow-model-requests.",
            "*typedagent blocked a real model request to https://api.anthropic.com/v1/messages in "
            "test_inner_real.py::test_sync_client.",
            "*typedagent blocked a real model request to https://api.anthropic.com/v1/messages in "
            "test_inner_real.py::test_aiohttp_client.",
        ]
    )


def test_plugin_blocks_where_a_marker_or_a_typedagent_fixture_opts_in(inner: pytest.Pytester) -> None:
    """``block_model_requests`` on a test or a module, or using an offline fixture, blocks that test only."""
    blocked = REACHES_THE_TRANSPORT.replace("def test_reaches_the_transport():", "{header}")
    inner.makepyfile(
        test_inner_marked_test=blocked.format(header="@pytest.mark.block_model_requests\ndef test_marked():"),
        test_inner_marked_module="pytestmark = __import__('pytest').mark.block_model_requests\n"
        + blocked.format(header="def test_in_marked_module():"),
        test_inner_fixture=blocked.format(header="def test_scripted(scripted_client):"),
        test_inner_unmarked=REACHES_THE_TRANSPORT,
    )
    result = run(inner)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines_random(
        [
            "*typedagent blocked a real model request to http://0.0.0.0/v1/messages in "
            "test_inner_marked_test.py::test_marked.",
            "*blocked a real model request * in test_inner_marked_module.py::test_in_marked_module.",
            "*blocked a real model request * in test_inner_fixture.py::test_scripted.",
        ]
    )


@pytest.mark.parametrize(
    ("args", "marker"),
    [(["--allow-model-requests"], "@pytest.mark.block_model_requests"), ([], "@pytest.mark.allow_model_requests")],
)
def test_plugin_allows_real_requests_when_asked(inner: pytest.Pytester, args: list[str], marker: str) -> None:
    """The command-line option and the allow marker lift a block the project or the test asked for."""
    inner.makeini(BLOCKING_INI)
    inner.makepyfile(
        test_inner_allowed=REACHES_THE_TRANSPORT.replace("def test_", f"{marker}\ndef test_"),
    )
    run(inner, *args).assert_outcomes(passed=1)


def test_plugin_keeps_loopback_and_mock_transports_working(inner: pytest.Pytester) -> None:
    """The fake server on 127.0.0.1, ``localhost`` and ``httpx2.MockTransport`` are never blocked."""
    inner.makeini(BLOCKING_INI)
    inner.makepyfile(
        test_inner_local="""
        import anthropic
        import httpx2
        from typedagent import execute_agent
        from typedagent.testing import output_call
        from conftest import AGENT

        async def test_fake_server(fake_anthropic_server):
            fake_anthropic_server.add(output_call({"city": "Paris"}))
            result = await execute_agent(AGENT, "Paris", client=fake_anthropic_server.client())
            assert result.output.city == "Paris"

        def test_localhost(fake_anthropic_server):
            fake_anthropic_server.add("hi")
            url = f"http://localhost:{fake_anthropic_server.port}"
            with anthropic.Anthropic(api_key="k", base_url=url) as client:
                assert client.messages.create(model="m", max_tokens=1, messages=[]).content[0].text == "hi"

        def test_mock_transport():
            def handle(request):
                body = {"type": "error", "error": {"type": "not_found_error", "message": "x"}}
                return httpx2.Response(404, json=body)

            http = httpx2.Client(transport=httpx2.MockTransport(handle))
            client = anthropic.Anthropic(api_key="k", http_client=http, max_retries=0)
            try:
                client.messages.create(model="m", max_tokens=1, messages=[])
            except anthropic.NotFoundError as exc:
                assert exc.status_code == 404
        """
    )
    run(inner).assert_outcomes(passed=3)


def test_plugin_scripted_client_fixture(inner: pytest.Pytester) -> None:
    """``scripted_client`` is an empty ScriptedClient, fresh for each test."""
    inner.makepyfile(
        test_inner_scripted="""
        from typedagent import execute_agent
        from typedagent.testing import ScriptedClient, output_call
        from conftest import AGENT

        async def test_one(scripted_client):
            assert isinstance(scripted_client, ScriptedClient) and scripted_client.remaining == 0
            scripted_client.add(output_call({"city": "Paris"}))
            assert (await execute_agent(AGENT, "x", client=scripted_client)).ok

        def test_two(scripted_client):
            assert scripted_client.requests == [] and scripted_client.script == []
        """
    )
    run(inner).assert_outcomes(passed=2)


def test_plugin_fake_server_fixture_reports_unanswered_requests(inner: pytest.Pytester) -> None:
    """Requests the script could not answer fail the test at teardown, unless the test already failed."""
    inner.makepyfile(
        test_inner_server="""
        import anthropic
        import pytest

        def test_exhausted(fake_anthropic_server):
            url = fake_anthropic_server.base_url
            with anthropic.Anthropic(api_key="k", base_url=url, max_retries=0) as client:
                with pytest.raises(anthropic.BadRequestError):
                    client.messages.create(model="m", max_tokens=1, messages=[])

        def test_already_failing(fake_anthropic_server):
            url = fake_anthropic_server.base_url
            with anthropic.Anthropic(api_key="k", base_url=url, max_retries=0) as client:
                client.messages.create(model="m", max_tokens=1, messages=[])
        """
    )
    result = run(inner)
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR at teardown of test_exhausted*",
            "*ScriptError: FakeAnthropicServer could not answer 1 request(s):",
        ]
    )


CASSETTE_TESTS = """
import pytest
from typedagent import execute_agent
from conftest import AGENT


@pytest.mark.parametrize("city", ["Paris", "Rio de Janeiro"])
async def test_city(cassette, city):
    result = await execute_agent(AGENT, city, client=cassette)
    assert result.output.city == city
"""


def test_plugin_cassette_records_then_replays(inner: pytest.Pytester) -> None:
    """``--record-cassettes`` writes one cassette per test next to the test file; a plain run replays them."""
    inner.makepyfile(test_inner_cassettes=CASSETTE_TESTS)
    run(inner, "--record-cassettes").assert_outcomes(passed=2)
    folder = inner.path / "cassettes" / "test_inner_cassettes"
    assert sorted(path.name for path in folder.iterdir()) == ["test_city_Paris.json", "test_city_Rio_de_Janeiro.json"]
    calls = json.loads((folder / "test_city_Paris.json").read_text())["calls"]
    assert [call["request"]["messages"] for call in calls] == [[{"role": "user", "content": "Paris"}]]
    inner.makeconftest(CONFTEST.replace("return FunctionClient", "raise AssertionError('not used on replay')\n    #"))
    run(inner).assert_outcomes(passed=2)


def test_plugin_cassette_drift_and_missing_calls(inner: pytest.Pytester) -> None:
    """A replay that drifts fails the test; one that makes fewer calls errors at teardown; none is missing."""
    inner.makepyfile(test_inner_cassettes=CASSETTE_TESTS)
    run(inner, "--record-cassettes").assert_outcomes(passed=2)
    inner.makepyfile(
        test_inner_cassettes="""
        import pytest
        from typedagent import execute_agent
        from conftest import AGENT


        @pytest.mark.parametrize("city", ["Paris", "Rio de Janeiro"])
        async def test_city(cassette, city):
            if city == "Paris":
                await execute_agent(AGENT, "Lyon", client=cassette)

        async def test_unrecorded(cassette):
            pass
        """
    )
    result = run(inner)
    result.assert_outcomes(failed=1, passed=1, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*CassetteError: ReplayClient: call 1 does not match recorded call 1 of *test_city_Paris.json*",
            '*messages?0?.content: expected "Paris", got "Lyon"',
            "*1 recorded call(s) of *test_city_Rio_de_Janeiro.json' were never requested (entries ?1?)*",
            "*no cassette at *test_unrecorded.json'. Record it first*",
        ]
    )


def test_plugin_cassette_path_can_be_overridden(inner: pytest.Pytester) -> None:
    """Overriding ``cassette_path`` moves the cassette; an empty recording replays as no calls."""
    inner.makepyfile(
        test_inner_moved="""
        import pytest

        @pytest.fixture
        def cassette_path(tmp_path_factory):
            return tmp_path_factory.getbasetemp().parent / "shared.json"

        def test_nothing(cassette):
            assert cassette.path.name == "shared.json"
        """
    )
    run(inner, "--record-cassettes").assert_outcomes(passed=1)
    run(inner).assert_outcomes(passed=1)


def test_plugin_default_recorder_is_the_anthropic_client(inner: pytest.Pytester) -> None:
    """Without an override, recording goes through ``AsyncAnthropic()``, and is not blocked."""
    inner.makeconftest("")
    inner.makepyfile(
        test_inner_default="""
        import anthropic

        def test_real_client(cassette, monkeypatch):
            assert isinstance(cassette.client, anthropic.AsyncAnthropic)
        """
    )
    run(inner, "--record-cassettes").assert_outcomes(passed=1)


def test_plugin_registers_its_markers_and_options(inner: pytest.Pytester) -> None:
    """The markers are known under ``--strict-markers`` and listed; the options show in ``--help``."""
    inner.makepyfile(
        test_inner_marker="""
        import pytest

        @pytest.mark.allow_model_requests
        def test_allowed():
            pass

        @pytest.mark.block_model_requests
        def test_blocked():
            pass
        """
    )
    run(inner, "--strict-markers").assert_outcomes(passed=2)
    run(inner, "--markers").stdout.fnmatch_lines(
        [
            "@pytest.mark.block_model_requests: fail this test if it sends a request to a real model API*",
            "@pytest.mark.allow_model_requests: let this test send*",
        ]
    )
    run(inner, "--help").stdout.fnmatch_lines(
        ["*--record-cassettes*", "*--allow-model-requests*", "*typedagent_block_model_requests*"]
    )


def test_plugin_cassette_paths_follow_the_test_file(inner: pytest.Pytester) -> None:
    """Cassettes of tests in a subfolder live next to that test file."""
    sub = inner.mkdir("sub")
    (sub / "test_inner_nested.py").write_text("def test_x(cassette):\n    pass\n")
    run(inner, "--record-cassettes").assert_outcomes(passed=1)
    assert Path(sub / "cassettes" / "test_inner_nested" / "test_x.json").exists()


def test_plugin_guards_the_aiohttp_transport_only_when_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the SDK's aiohttp backend loaded, only httpx2's own transports are guarded."""
    from typedagent.testing import pytest_plugin

    loaded = [cls.__name__ for cls, _, _ in pytest_plugin._transports()]
    assert loaded == ["AsyncHTTPTransport", "HTTPTransport", "AiohttpTransport"]
    monkeypatch.delitem(sys.modules, "anthropic._vendor.httpx_aiohttp.transport")
    assert [cls.__name__ for cls, _, _ in pytest_plugin._transports()] == ["AsyncHTTPTransport", "HTTPTransport"]


def test_testing_guide_pytest_asyncio_configuration_runs_async_tests(pytester: pytest.Pytester) -> None:
    """The guide's pyproject.toml settings run its ``async def`` fixture tests, with no pytest-asyncio warning."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "testing.md").read_text()
    (settings,) = [block for block in re.findall(r"^```toml\n(.*?)^```", guide, re.S | re.M) if "asyncio" in block]
    pytester.makefile(".toml", pyproject=settings)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_inner_async="""
        from typedagent import execute_agent
        from typedagent.testing import output_call
        from conftest import AGENT

        async def test_paris(scripted_client):
            scripted_client.add(output_call({"city": "Paris"}))
            assert (await execute_agent(AGENT, "Paris", client=scripted_client)).ok
        """
    )
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:anyio", "-W", "error")  # as run_inner
    result.assert_outcomes(passed=1)
    assert "PytestDeprecationWarning" not in result.stdout.str()
