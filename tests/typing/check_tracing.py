"""Type-checked, never run: ``instrument()`` takes a real tracer provider and keyword arguments only.

Every line ending in ``# type: ignore[...]`` must stay an error for mypy (``warn_unused_ignores``),
every ``# pyright: ignore[...]`` one for basedpyright (``reportUnnecessaryTypeIgnoreComment``).
"""

from typing import assert_type

from opentelemetry.sdk.trace import TracerProvider

from typedagent import instrument

provider = TracerProvider()
assert_type(instrument(tracer_provider=provider, include_content=True), None)
instrument(enabled=False)
instrument(provider)  # type: ignore[call-arg]  # pyright: ignore[reportCallIssue]
instrument(tracer_provider="otlp")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
instrument(include_content="yes")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
