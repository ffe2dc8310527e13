"""The agent definition: what ``define_agent()`` builds and checks, before anything is sent.

``AgentDefinition`` and ``ValidationConfig``, helper tools (``HelperTool``, ``@tool`` and the signature they are
read from), an agent made a tool (``as_tool``), history processors, the output tool and ``submit``, the run
context tools receive, the protocol of toolsets (tools that live elsewhere, an MCP server's: ``remote``), the
validation of an output candidate (schema, then the custom validators), the checks on server tool definitions, and
finding an agent by its ``module:attr`` reference.

May import: ``_shared`` only. It knows nothing of the Messages API boundary, the loop, or anything above them.
"""
