"""A small MCP server: a weather forecast tool, over stdio (written with the official ``mcp`` package)."""

import pydantic
from mcp.server.mcpserver import MCPServer

server = MCPServer("weather")


class Forecast(pydantic.BaseModel):
    city: str
    temperature_c: float
    sky: str


@server.tool()
def forecast(city: str) -> Forecast:
    """Tomorrow's forecast for a city."""
    return Forecast(city=city, temperature_c=18.5, sky="light rain")


if __name__ == "__main__":
    server.run("stdio")
