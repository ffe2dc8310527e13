"""Tools from MCP servers, run by typedagent: ``MCPToolset.stdio(...)`` and ``MCPToolset.http(...)``.

Needs the ``mcp`` extra (``pip install 'typedagent[mcp]'``, the official ``mcp`` package, 2.x)::

    from typedagent import define_agent, OutputTool
    from typedagent.mcp import MCPToolset

    files = MCPToolset.stdio("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv/docs"], prefix="fs")
    agent = define_agent(name="librarian", model="claude-sonnet-4-6", output=OutputTool(Answer), helpers=[files])

The server's tools join the agent's helpers: the model calls them, typedagent runs them on the server, and their
results go back as tool results. This is the client side of MCP, for servers your code can reach (a local
process, a private URL). The Messages API's own MCP connector (``model_settings={"mcp_servers": [...]}``) is the
server side: the API calls a public server itself. ``docs/mcp.md`` compares the two.
"""

from __future__ import annotations

from ._toolset import MCPToolset

__all__ = ["MCPToolset"]
