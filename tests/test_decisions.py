"""The decisions that resume a paused execution: their checks, and their JSON form (for other processes)."""

from __future__ import annotations

from typing import Any

import pytest

from typedagent import Approve, Decision, Deny, ExternalResult
from typedagent._shared.decisions import decision_from_json, decision_to_json


@pytest.mark.parametrize(
    ("decision", "data"),
    [
        (Approve(), {"approve": True}),
        (Approve(input={"path": "/tmp"}), {"approve": True, "input": {"path": "/tmp"}}),
        (Deny("not now"), {"deny": "not now"}),
        (Deny(), {"deny": "The user did not approve this tool call."}),
        (ExternalResult({"rows": 3}), {"result": {"rows": 3}}),
        (ExternalResult(None), {"result": None}),
        (ExternalResult(error="down"), {"error": "down"}),
    ],
)
def test_decisions_round_trip_through_their_json_form(decision: Decision, data: dict[str, Any]) -> None:
    """Each decision has one JSON shape, and reads back as the same decision."""
    assert decision_to_json(decision) == data
    assert decision_from_json(data) == decision


@pytest.mark.parametrize(
    "data",
    [
        "approve",
        {"approve": False},
        {"approve": True, "input": [1]},
        {"deny": 3},
        {"error": None},
        {"result": 1, "error": "x"},
        {},
    ],
)
def test_decisions_json_of_another_shape_is_a_value_error(data: object) -> None:
    """Anything else is a ``ValueError`` listing the shapes a decision takes."""
    with pytest.raises(ValueError, match=r"call 'x'.*\{\"approve\": true\}|call 'x': \"input\" must be an object"):
        decision_from_json(data, "call 'x'")


def test_decisions_check_their_fields() -> None:
    """Edited input is a dict (copied), a reason and an error are text, a result is a value or an error."""
    edit = {"path": "/tmp", "tags": ["a"]}
    approved = Approve(input=edit)
    edit["tags"].append("b")
    assert approved.input == {"path": "/tmp", "tags": ["a"]}
    with pytest.raises(TypeError, match=r"Approve\(input=\.\.\.\) must be a dict"):
        Approve(input=["path"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Deny\(reason\) must be a str"):
        Deny(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"ExternalResult\(error=\.\.\.\) must be a str"):
        ExternalResult(error=404)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="takes a value or an error, not both"):
        ExternalResult("x", error="y")
