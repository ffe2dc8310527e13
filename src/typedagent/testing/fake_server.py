"""Run ``FakeAnthropicServer`` in its own process: ``python -m typedagent.testing.fake_server``.

Prints the base URL on stdout (one line, flushed) once the port is bound, serves until SIGTERM or
SIGINT, then prints ``requests served: N`` (and any script problems) on stderr. ``GET /_fake/stats``
returns ``{"requests_served": N, "problems": [...]}`` while it runs.

Example:
    ``python -m typedagent.testing.fake_server --script scenario.json --port 0 --latency-ms 50
    --per-conversation``

The script file is a JSON list written with ``script_to_json(items)``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ._ratelimit import ServerRateLimits
from ._script_json import script_from_json
from ._server import FakeAnthropicServer

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and serve until a signal; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m typedagent.testing.fake_server",
        description="Serve a scripted Messages API on a local port (see typedagent.testing.FakeAnthropicServer).",
    )
    parser.add_argument("--script", required=True, type=Path, help="JSON file written with script_to_json()")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--latency-ms", type=float, default=0, help="added before every reply (default 0)")
    parser.add_argument(
        "--per-conversation", action="store_true", help="replay the script independently for every conversation"
    )
    limits = parser.add_argument_group("rate limits (token buckets with the API's headers and 429s)")
    limits.add_argument("--requests-per-minute", type=int, metavar="N")
    limits.add_argument("--input-tokens-per-minute", type=int, metavar="N")
    limits.add_argument("--output-tokens-per-minute", type=int, metavar="N")
    limits.add_argument("--rate-limit-capacity-s", type=float, default=60.0, metavar="S", help="burst (default 60)")
    args = parser.parse_args(argv)
    rate_limits = None
    if args.requests_per_minute or args.input_tokens_per_minute or args.output_tokens_per_minute:
        rate_limits = ServerRateLimits(
            requests_per_minute=args.requests_per_minute,
            input_tokens_per_minute=args.input_tokens_per_minute,
            output_tokens_per_minute=args.output_tokens_per_minute,
            capacity_s=args.rate_limit_capacity_s,
        )
    try:
        script = script_from_json(json.loads(args.script.read_text()))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.exit(2, f"fake_server: cannot read the script {str(args.script)!r}: {exc}\n")
    server = FakeAnthropicServer(
        script,
        per_conversation=args.per_conversation,
        latency_ms=args.latency_ms,
        host=args.host,
        port=args.port,
        record_requests=False,
        strict=False,
        rate_limits=rate_limits,
    )
    asyncio.run(server.serve(on_ready=lambda url: print(url, flush=True), handle_signals=True))
    print(f"requests served: {server.requests_served}", file=sys.stderr)
    if rate_limits is not None:
        print(f"rate limited (429): {server.rate_limited}", file=sys.stderr)
    for problem in server.problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
