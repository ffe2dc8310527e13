"""An MCP tool result (``CallToolResult`` on the wire) as Messages API ``tool_result`` content."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from .._run.rendering import render_result

__all__ = ["result_content"]

IMAGE_TYPES: Final = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
"""The image types a ``tool_result`` may hold (the Messages API's ``Base64ImageSource``)."""


def result_content(result: Mapping[str, Any]) -> tuple[str | list[dict[str, Any]], bool]:
    """The content the model reads for ``result`` (the wire form: ``content``, ``structuredContent``, ``isError``).

    Returns the content (a text, or content blocks when there is more than text) and whether it is an error.
    Structured content is what a tool returned when its blocks are only text: the MCP specification has such a
    tool repeat it as JSON text, so it is sent once, as JSON (a primitive the server wrapped as ``{"result": x}``
    unwrapped). Images become image blocks, embedded resources documents or images, anything the Messages API
    cannot take a line of text saying what it was.
    """
    is_error = result.get("isError") is True
    raw_content: object = result.get("content")
    items: Sequence[object] = cast("list[object]", raw_content) if isinstance(raw_content, list) else []
    structured = result.get("structuredContent")
    only_text = all(_kind(item) == "text" for item in items)
    if structured is not None and (only_text or not items):
        return render_result(_unwrapped(structured)), is_error
    blocks = [block for item in items for block in _blocks(item)]
    if all(block["type"] == "text" for block in blocks):
        return "\n".join(block["text"] for block in blocks), is_error
    return blocks, is_error


def _kind(item: object) -> object:
    return cast("Mapping[str, object]", item).get("type") if isinstance(item, Mapping) else None


def _unwrapped(structured: object) -> object:
    """A primitive or list the server wrapped as ``{"result": ...}`` (MCPServer does), unwrapped."""
    if not isinstance(structured, Mapping):
        return structured
    fields = cast("Mapping[str, object]", structured)
    return fields["result"] if len(fields) == 1 and "result" in fields else fields


def _blocks(item: object) -> list[dict[str, Any]]:
    """One MCP content item as content blocks (none for empty text, which the Messages API refuses)."""
    if not isinstance(item, Mapping):
        return [_note(f"[content the server sent in a shape MCP does not define: {type(item).__name__}]")]
    fields = cast("Mapping[str, Any]", item)
    kind = fields.get("type")
    if kind == "text":
        text = fields.get("text")
        return [_note(text)] if isinstance(text, str) and text else []
    if kind == "image":
        return [_image(fields.get("mimeType"), fields.get("data"), "image")]
    if kind == "audio":
        size = _size(fields.get("data"))
        return [_note(f"[audio ({fields.get('mimeType')}, {size} bytes): the Messages API takes no audio]")]
    if kind == "resource_link":
        return [_note(_link(fields))]
    if kind == "resource":
        resource = fields.get("resource")
        return [_resource(cast("Mapping[str, Any]", resource) if isinstance(resource, Mapping) else {})]
    return [_note(f"[{kind!s} content: typedagent does not know this MCP content type]")]


def _note(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _image(mime: object, data: object, what: str) -> dict[str, Any]:
    if mime in IMAGE_TYPES and isinstance(data, str) and _decodes(data):
        return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    if mime in IMAGE_TYPES:
        return _note(f"[{what} ({mime}): its data is not valid base64, so it was not sent]")
    return _note(f"[{what} ({mime}, {_size(data)} bytes): the Messages API takes only JPEG, PNG, GIF and WebP images]")


def _link(fields: Mapping[str, Any]) -> str:
    name = fields.get("title") or fields.get("name") or "resource"
    parts = [f"[resource link: {name} <{fields.get('uri')}>"]
    if fields.get("mimeType"):
        parts.append(f" ({fields['mimeType']})")
    if fields.get("description"):
        parts.append(f": {fields['description']}")
    return "".join(parts) + "]"


def _resource(resource: Mapping[str, Any]) -> dict[str, Any]:
    """An embedded resource: text as a document, a PDF as a document, an image as an image, else a note."""
    uri = str(resource.get("uri", ""))
    mime = resource.get("mimeType")
    text = resource.get("text")
    blob = resource.get("blob")
    if isinstance(text, str):
        return _document({"type": "text", "media_type": "text/plain", "data": text}, uri)
    if mime in IMAGE_TYPES:
        return _image(mime, blob, f"image resource {uri}")
    if mime == "application/pdf" and isinstance(blob, str) and _decodes(blob):
        return _document({"type": "base64", "media_type": "application/pdf", "data": blob}, uri)
    if isinstance(mime, str) and mime.startswith("text/") and isinstance(blob, str):
        decoded = _decoded_text(blob)
        if decoded is None:
            return _note(f"[resource {uri} ({mime}): its data is not valid base64 UTF-8 text, so it was not sent]")
        return _document({"type": "text", "media_type": "text/plain", "data": decoded}, uri)
    return _note(f"[resource {uri} ({mime}, {_size(blob)} bytes): the Messages API cannot read this type]")


def _document(source: dict[str, Any], uri: str) -> dict[str, Any]:
    document: dict[str, Any] = {"type": "document", "source": source}
    if uri:
        document["title"] = uri[:500]
    return document


def _decodes(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _decoded_text(blob: str) -> str | None:
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return None


def _size(data: object) -> int:
    """About how many bytes base64 ``data`` stands for (0 when there is no data)."""
    if not isinstance(data, str):
        return 0
    return len(data) * 3 // 4 - data[-2:].count("=")
