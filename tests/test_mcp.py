"""Declaring MCP toolsets (issue 29): the constructors' checks, toolsets beside helpers, and results as content."""

from __future__ import annotations

import base64
import sys
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed (the dev extra brings it)")

from support import Triage, triage_agent

from typedagent import AgentDefinitionError, OutputTool, define_agent, tool
from typedagent._run.request import protocol_note
from typedagent.mcp import MCPToolset
from typedagent.mcp._content import result_content
from typedagent.mcp._tools import Options, build_tools

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return query


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: MCPToolset.stdio(""), "MCPToolset.stdio(command=...) must name a program, got ''."),
        (lambda: MCPToolset.stdio("npx", "server.js"), "must be a list of strings, got 'server.js': write args="),
        (lambda: MCPToolset.http("localhost:8000/mcp"), "must be an http:// or https:// URL, got 'localhost:8000/mcp'"),
        (lambda: MCPToolset.http("http://h/mcp", headers={"X": 1}), "headers=...) must map header names to string"),
        (lambda: MCPToolset.stdio("x", name=""), "MCPToolset(name=...) must be a non-empty string, got ''."),
        (lambda: MCPToolset.stdio("x", prefix="fs."), "MCPToolset(prefix=...) must be 1-64 characters from a-z"),
        (lambda: MCPToolset.stdio("x", timeout_s=0), "MCPToolset(timeout_s=...) must be a finite positive number"),
        (lambda: MCPToolset.stdio("x", timeout_s=float("nan")), "timeout_s=...) must be a finite positive number"),
        (lambda: MCPToolset.http("http://h", connect_timeout_s=-1), "connect_timeout_s=...) must be a finite positive"),
        (lambda: MCPToolset.stdio("x", allow="read_file"), "MCPToolset(allow=...) must be a list of the server's tool"),
        (lambda: MCPToolset.stdio("x", deny=[1]), "MCPToolset(deny=...) must hold tool names (strings), got [1]."),
        (lambda: MCPToolset.stdio("x", requires_approval="rm"), "requires_approval=...) must be a list of the server"),
    ],
)
def test_mcp_toolset_options_are_checked_when_built(build: Any, message: str) -> None:
    """Each invalid option is an AgentDefinitionError that says how to fix it."""
    with pytest.raises(AgentDefinitionError) as raised:
        build()
    assert message in str(raised.value)


def test_mcp_toolsets_go_beside_helpers() -> None:
    """A toolset in helpers= is one of the agent's toolsets: its helpers stay the tools, in their order."""
    files = MCPToolset.stdio(sys.executable, ["server.py"], name="files", prefix="fs")
    agent = triage_agent(helpers=[files, lookup, files])
    assert agent.helpers == (lookup,)
    assert agent.toolsets == (files,)
    assert [tool["name"] for tool in agent.tool_params()] == ["lookup", "final_output"]
    assert agent.with_options(model="claude-haiku-4-5").toolsets == (files,)
    assert (files.name, files.label, files.prefix) == ("files", "files", "fs")
    assert repr(files) == f"MCPToolset.stdio('{sys.executable} server.py', name='files')"
    remote = MCPToolset.http("https://example.com/mcp")
    assert (remote.name, remote.label, repr(remote)) == (
        None,
        "https://example.com/mcp",
        ("MCPToolset.http('https://example.com/mcp', name=None)"),
    )


def test_mcp_toolset_alone_must_still_be_in_a_list() -> None:
    """helpers=toolset (not in a list) is refused, saying to write a list."""
    with pytest.raises(AgentDefinitionError, match=r"define_agent\(helpers=...\) must be a list, got MCPToolset"):
        define_agent(name="a", model="m", output=OutputTool(Triage), helpers=MCPToolset.stdio("x"))  # type: ignore[arg-type]


def test_mcp_protocol_note_states_the_budget_for_a_toolset_alone() -> None:
    """With only a toolset, the protocol note states the iteration budget: the toolset's calls can use it up."""
    assert "You have at most" in protocol_note(triage_agent(helpers=[MCPToolset.stdio("x")]))
    assert "You have at most" not in protocol_note(triage_agent())


def _listing(name: str, **more: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}, **more}


async def _no_call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    raise AssertionError("not called")


def test_mcp_tool_names_are_prefixed_made_valid_and_unique() -> None:
    """Names the API refuses become valid (``.`` to ``_``, long ones cut and hashed), and never collide."""
    long = "x" * 70
    listed = [_listing("read.file"), _listing("read_file"), _listing(long), _listing("", title="Untitled")]
    tools = build_tools("s", listed, Options(prefix="fs"), _no_call)
    names = [tool.name for tool in tools]
    assert names[0] == "fs_read_file"
    assert names[1].startswith("fs_read_file_")
    assert len(names[1]) == 21
    assert len(names[2]) == 64
    assert names[2].startswith("fs_xxx")
    assert names[3] == "fs_"
    assert tools[3].to_param() == {"name": "fs_", "input_schema": {"type": "object"}, "description": "Untitled"}
    assert [tool.server_name for tool in tools] == ["read.file", "read_file", long, ""]
    assert len(set(names)) == 4


def test_mcp_requires_approval_is_kept_per_tool() -> None:
    """requires_approval=True marks every tool, a list of the server's names marks those."""
    listed = [_listing("read"), _listing("delete")]
    some = build_tools("s", listed, Options(requires_approval=frozenset({"delete"})), _no_call)
    every = build_tools("s", listed, Options(requires_approval=True), _no_call)
    assert [(t.name, t.requires_approval) for t in some] == [("read", False), ("delete", True)]
    assert [t.requires_approval for t in every] == [True, True]


def test_mcp_tool_with_a_broken_schema_is_sent_as_given_and_not_checked() -> None:
    """A schema jsonschema cannot compile is sent as the server gave it; the server checks the input."""
    listed = [{"name": "odd", "inputSchema": {"type": "object", "properties": {"a": {"type": 12}}}}]
    (odd,) = build_tools("s", listed, Options(), _no_call)
    assert odd.validator is None
    assert odd.to_param()["input_schema"] == {"type": "object", "properties": {"a": {"type": 12}}}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}, ("a\nb", False)),
        ({"content": [{"type": "text", "text": "7"}], "structuredContent": {"result": 7}}, ("7", False)),
        ({"content": [], "structuredContent": {"rows": [1, 2]}}, ('{"rows":[1,2]}', False)),
        ({"content": [{"type": "text", "text": ""}]}, ("", False)),
        ({"content": [{"type": "text", "text": "nope"}], "isError": True}, ("nope", True)),
        ({}, ("", False)),
        (
            {"content": [{"type": "image", "mimeType": "image/tiff", "data": "AAAA"}]},
            ("[image (image/tiff, 3 bytes): the Messages API takes only JPEG, PNG, GIF and WebP images]", False),
        ),
        (
            {"content": [{"type": "image", "mimeType": "image/png", "data": "not base64!"}]},
            ("[image (image/png): its data is not valid base64, so it was not sent]", False),
        ),
        (
            {
                "content": [
                    {
                        "type": "resource",
                        "resource": {
                            "uri": "mem://a",
                            "mimeType": "text/csv",
                            "blob": base64.b64encode(b"a,b").decode(),
                        },
                    }
                ]
            },
            (
                [
                    {
                        "type": "document",
                        "source": {"type": "text", "media_type": "text/plain", "data": "a,b"},
                        "title": "mem://a",
                    }
                ],
                False,
            ),
        ),
        (
            {"content": [{"type": "resource", "resource": {"uri": "mem://b", "mimeType": "image/png", "blob": PNG}}]},
            ([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}], False),
        ),
        (
            {
                "content": [
                    {
                        "type": "resource",
                        "resource": {"uri": "mem://z", "mimeType": "application/zip", "blob": "UEsDBA=="},
                    }
                ]
            },
            ("[resource mem://z (application/zip, 4 bytes): the Messages API cannot read this type]", False),
        ),
        (
            {"content": [{"type": "hologram"}, "junk"], "structuredContent": {"x": 1}},
            (
                "[hologram content: typedagent does not know this MCP content type]\n"
                "[content the server sent in a shape MCP does not define: str]",
                False,
            ),
        ),
        ({"content": [], "structuredContent": [1, 2]}, ("[1,2]", False)),
        (
            {"content": [{"type": "resource_link", "name": "n", "title": "Spec", "uri": "u://s", "description": "d"}]},
            ("[resource link: Spec <u://s>: d]", False),
        ),
        (
            {"content": [{"type": "resource", "resource": {"uri": "u://t", "mimeType": "text/plain", "blob": "%%"}}]},
            ("[resource u://t (text/plain): its data is not valid base64 UTF-8 text, so it was not sent]", False),
        ),
        (
            {"content": [{"type": "audio", "mimeType": "audio/wav"}, {"type": "resource", "resource": "odd"}]},
            (
                "[audio (audio/wav, 0 bytes): the Messages API takes no audio]\n"
                "[resource  (None, 0 bytes): the Messages API cannot read this type]",
                False,
            ),
        ),
        (
            {"content": [{"type": "image", "mimeType": "image/png", "data": PNG}], "structuredContent": {"x": 1}},
            ([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}], False),
        ),
    ],
)
def test_mcp_result_content(result: dict[str, Any], expected: Any) -> None:
    """Each MCP result becomes what the model can read: text, images, documents, or a note of what was left out."""
    assert result_content(result) == expected


async def test_mcp_toolset_requiring_approval_needs_pausable_or_approve() -> None:
    """A toolset whose tools need approval, executed with neither pausable=True nor approve=, is a ValueError."""
    from typedagent import execute_agent
    from typedagent.testing import ScriptedClient

    asking = MCPToolset.stdio("/nonexistent/server", name="files", requires_approval=["delete_file"])
    assert asking.requires_approval is True
    assert MCPToolset.stdio("x", requires_approval=[]).requires_approval is False
    client = ScriptedClient([])
    with pytest.raises(ValueError, match=r"tools that need approval \('toolset files'\): pass .*approve=callback"):
        await execute_agent(triage_agent(helpers=[asking]), "go", client=client)
    assert client.requests == []


def test_mcp_docs_show_the_example_server_as_it_is() -> None:
    """docs/mcp.md's server block is examples/mcp/weather_server.py, word for word (its agent block runs it)."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "docs" / "mcp.md").read_text()
    server = (root / "examples" / "mcp" / "weather_server.py").read_text()
    assert f"```python\n{server}```" in page


def test_mcp_toolset_pickles_without_its_connections() -> None:
    """A toolset pickles (without its connections), as execute_many_ray ships agents to workers."""
    import pickle

    files = MCPToolset.stdio(sys.executable, ["server.py"], env={"A": "1"}, name="files", prefix="fs", deny=["rm"])
    copy = pickle.loads(pickle.dumps(files))
    assert isinstance(copy, MCPToolset)
    assert (copy.name, copy.label, copy.prefix, repr(copy)) == ("files", "files", "fs", repr(files))


def test_mcp_toolset_without_the_mcp_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the mcp package, building a toolset raises ImportError naming the extra to install."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mcp" else real(name, *a))
    with pytest.raises(ImportError, match=r"pip install 'typedagent\[mcp\]'"):
        MCPToolset.http("https://example.com/mcp")
