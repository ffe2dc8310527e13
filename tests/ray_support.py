"""Client factories for the Ray tests: picklable, imported by the Ray workers (``PYTHONPATH`` has this folder)."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typedagent.testing._server import sdk_client


@dataclass(frozen=True)
class ServerClient:
    """Builds a client of the fake server at ``base_url``."""

    base_url: str

    def __call__(self) -> Any:
        return sdk_client(self.base_url, keep_alive=False)


@dataclass(frozen=True)
class DiesOnce:
    """Builds a client of the fake server; the first worker to build one dies ``after_s`` later, mid-shard."""

    base_url: str
    marker: str
    after_s: float

    def __call__(self) -> Any:
        client = sdk_client(self.base_url, keep_alive=False)
        marker = Path(self.marker)
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            threading.Timer(self.after_s, os._exit, args=(1,)).start()
        return client
