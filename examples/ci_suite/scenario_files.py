"""Reads the scripted conversations in scenarios/ and turns them into ScriptedClient scripts.

A scenario file is plain JSON, so adding a case needs no Python:

    {
      "description": "what the case shows",
      "prompt": "the customer's message",
      "model": [steps the model takes, one per response],
      "expect": {"outcome": "ok" or an AgentErrorCode, and optionally "output", "tools",
                 "attempts", "feedback", "tool_results"}
    }

A step is ``{"call": tool, "input": {...}}``, ``{"output": {...}}``, ``{"text": "..."}``,
``{"api_error": 529}``, or ``{"response": [steps]}`` for several blocks in one response.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typedagent.testing import Block, ScriptItem, api_error, output_call, response, text, tool_call

SCENARIOS = Path(__file__).parent / "scenarios"


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    prompt: str
    script: list[ScriptItem]
    expect: dict[str, Any]


def _block(step: dict[str, Any]) -> Block:
    if "call" in step:
        return tool_call(step["call"], step.get("input", {}))
    if "output" in step:
        return output_call(step["output"])
    if "text" in step:
        return text(step["text"])
    raise ValueError(f"unknown step {step!r}: use call, output, text, api_error or response")


def _item(step: dict[str, Any]) -> ScriptItem:
    if "api_error" in step:
        return api_error(step["api_error"])
    if "response" in step:
        return response(*(_block(block) for block in step["response"]))
    return _block(step)


def load(path: Path) -> Scenario:
    data = json.loads(path.read_text())
    return Scenario(
        name=path.stem,
        description=data["description"],
        prompt=data["prompt"],
        script=[_item(step) for step in data["model"]],
        expect=data["expect"],
    )


ALL = [load(path) for path in sorted(SCENARIOS.glob("*.json"))]
