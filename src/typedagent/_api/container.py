"""The container a response names (code execution, web tools), passed back on the execution's next request."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

__all__ = ["carry_container"]


def carry_container(params: dict[str, Any], response: object) -> None:
    """Make the next request use the container ``response`` names, if it names one.

    The API runs code execution (and the web tools' dynamic filtering) in a container that outlives the request;
    sending its id back lets later calls see the same files. A ``container`` setting given as a dict
    (``{"id": ..., "skills": [...]}``) keeps its other fields.
    """
    container: object = getattr(response, "container", None)
    if container is None:
        return  # almost every response: no container
    if isinstance(container, Mapping):
        container_id = cast("Mapping[str, Any]", container).get("id")
    else:
        container_id = getattr(container, "id", None)
    if not isinstance(container_id, str) or not container_id:
        return
    current = params.get("container")
    if isinstance(current, Mapping):
        params["container"] = {**cast("Mapping[str, Any]", current), "id": container_id}
    else:
        params["container"] = container_id
