"""Scripts as JSON: ``script_to_json`` writes a script another process can serve, ``script_from_json`` reads it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ._items import ApiErrorSpec, Block, Delayed, MalformedBody, ScriptItem, as_response, response
from ._stream_script import StreamFault

__all__ = ["script_from_json", "script_to_json"]


def script_to_json(items: Iterable[ScriptItem]) -> list[Any]:
    """A script as JSON-ready data (for ``python -m typedagent.testing.fake_server --script FILE``)."""
    return [_item_to_json(item) for item in items]


def _item_to_json(item: ScriptItem) -> Any:
    if isinstance(item, ApiErrorSpec):
        return {
            "kind": "error",
            "status": item.status,
            "message": item.message,
            "error_type": item.error_type,
            "request_id": item.request_id,
            "headers": dict(item.headers),
        }
    if isinstance(item, Delayed):
        return {"kind": "delay", "seconds": item.seconds, "item": _item_to_json(item.item)}
    if isinstance(item, MalformedBody):
        return {"kind": "malformed", "body": item.body, "status": item.status}
    if isinstance(item, StreamFault):
        fault = {"fault": item.fault, "after": item.after, "error_type": item.error_type}
        return {"kind": "stream_fault", **fault, "item": _item_to_json(item.item)}
    scripted = as_response(item)
    blocks: list[dict[str, Any]] = []
    for block in scripted.blocks:
        data: dict[str, Any] = {"type": block.type, **block.data}
        if block.output:
            data["output"] = True
        if block.unknown:
            data["unknown"] = True
        blocks.append(data)
    entry = {"kind": "response", "content": blocks, "stop_reason": scripted.stop_reason, "usage": dict(scripted.usage)}
    if scripted.container is not None:
        entry["container"] = scripted.container
    if scripted.model is not None:
        entry["model"] = scripted.model
    return entry


def script_from_json(data: Iterable[Any]) -> list[ScriptItem]:
    """The inverse of ``script_to_json`` (a bare string is a text response)."""
    return [_item_from_json(entry) for entry in data]


def _item_from_json(value: object) -> ScriptItem:
    if isinstance(value, str):
        return value
    entry: Mapping[str, Any] = cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}
    kind = entry.get("kind")
    if kind == "error":
        return ApiErrorSpec(
            status=entry["status"],
            message=entry.get("message", "scripted API error"),
            error_type=entry.get("error_type"),
            request_id=entry.get("request_id"),
            headers=dict(entry.get("headers") or {}),
        )
    if kind == "delay":
        return Delayed(seconds=float(entry["seconds"]), item=_item_from_json(entry["item"]))
    if kind == "malformed":
        return MalformedBody(body=entry["body"], status=entry.get("status", 200))
    if kind == "stream_fault":
        item = _item_from_json(entry["item"])
        return StreamFault(item=item, after=int(entry["after"]), fault=entry["fault"], error_type=entry["error_type"])
    if kind == "response":
        blocks: list[Block] = []
        raw: dict[str, Any]
        for raw in entry["content"]:
            data = {k: v for k, v in raw.items() if k not in ("type", "output", "unknown")}
            if raw["type"] == "tool_use":
                data.setdefault("id", None)
            blocks.append(
                Block(type=raw["type"], data=data, output=bool(raw.get("output")), unknown=bool(raw.get("unknown")))
            )
        usage: Mapping[str, Any] | None = entry.get("usage")
        return response(
            *blocks,
            stop_reason=entry.get("stop_reason"),
            usage=usage,
            container=entry.get("container"),
            model=entry.get("model"),
        )
    raise ValueError(
        f"script entry {value!r} is not a script item: expected a string or an object whose 'kind' is "
        "'response', 'error', 'delay', 'malformed' or 'stream_fault' (see script_to_json)."
    )
