"""JSON values made up from a JSON schema: what ``SchemaClient`` sends as tool input and ``outputs()`` draws.

One walker over the schema makes every choice through a ``Chooser``: a seeded ``random.Random`` for
``SchemaClient`` (the same seed, the same values) or hypothesis' ``draw`` for ``outputs()`` (so hypothesis can
shrink a failing example).
"""

from __future__ import annotations

import importlib
import math
import random
import string
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, cast

from ._described_limits import restored

__all__ = ["Chooser", "RandomChooser", "SchemaValueError", "generate"]

SOFT_DEPTH: Final = 3
"""References followed before optional parts (optional fields, extra items, recursive branches) are left out."""
HARD_DEPTH: Final = 32
"""References followed before a schema that cannot end (a required field of its own type) is given up on."""
ALPHABET: Final = string.ascii_letters + string.digits
_RANGE: Final = 1000
"""Numbers without bounds are drawn from [-1000, 1000] by the random chooser."""


class SchemaValueError(ValueError):
    """No value can be made up for the schema (an unsupported pattern, a schema that never ends)."""


class Chooser(Protocol):
    """Where every choice of the walker comes from."""

    def integer(self, low: int | None, high: int | None) -> int:
        """An int within the bounds (each inclusive; None: unbounded)."""
        ...

    def number(self, low: float | None, high: float | None) -> float:
        """A finite float within the bounds (each inclusive; None: unbounded)."""
        ...

    def index(self, count: int) -> int:
        """One of ``range(count)``."""
        ...

    def text(self, min_size: int, max_size: int | None) -> str:
        """A string of that many characters."""
        ...


@dataclass(slots=True)
class RandomChooser:
    """Choices from a seeded ``random.Random``: small numbers, short words of letters and digits."""

    rng: random.Random

    def integer(self, low: int | None, high: int | None) -> int:
        """An int within the bounds, near zero when unbounded."""
        low = low if low is not None else min(-_RANGE, high if high is not None else 0)
        high = high if high is not None else max(_RANGE, low)
        return self.rng.randint(low, high)

    def number(self, low: float | None, high: float | None) -> float:
        """A float within the bounds, rounded to two decimals when that keeps it inside them."""
        low = low if low is not None else min(-_RANGE, high if high is not None else 0.0)
        high = high if high is not None else max(float(_RANGE), low)
        value = self.rng.uniform(low, high)
        rounded = round(value, 2)
        return rounded if low <= rounded <= high else value

    def index(self, count: int) -> int:
        """One of ``range(count)``."""
        return self.rng.randrange(count)

    def text(self, min_size: int, max_size: int | None) -> str:
        """A word of letters and digits, at most 12 long unless the minimum asks for more."""
        size = self.rng.randint(min_size, max(min_size, min(max_size if max_size is not None else 12, 12)))
        return "".join(self.rng.choice(ALPHABET) for _ in range(size))


def generate(schema: Mapping[str, Any], chooser: Chooser) -> Any:
    """A JSON value valid for ``schema`` (references resolve against ``schema`` itself).

    Raises:
        SchemaValueError: no value can be made up for it.
    """
    return _Walker(schema, chooser).value(schema, 0)


@dataclass(slots=True)
class _Walker:
    root: Mapping[str, Any]
    chooser: Chooser

    def value(self, schema: Mapping[str, Any], depth: int) -> Any:
        if depth > HARD_DEPTH:
            raise SchemaValueError("the schema nests too deeply to end (a required field of its own type?)")
        schema = restored(schema)
        ref = schema.get("$ref")
        if isinstance(ref, str):
            return self.value(self._target(ref, schema), depth + 1)
        all_of = schema.get("allOf")
        if isinstance(all_of, list):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in cast("list[Mapping[str, Any]]", all_of):
                merged = _merge(merged, self._target(part["$ref"], part) if "$ref" in part else part)
            return self.value(merged, depth)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            options = list(schema["enum"])
            return options[self.chooser.index(len(options))]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branch = self._branch(schema[key], depth)
                discriminator: Mapping[str, Any] = schema.get("discriminator") or {}
                tag = discriminator.get("propertyName")
                return self.value({**branch, "required": [tag]} if tag else branch, depth)
        kind = schema.get("type", "object" if "properties" in schema else None)
        if isinstance(kind, list):
            kinds = cast("list[str]", kind)
            kind = kinds[self.chooser.index(len(kinds))]
        maker: Callable[[_Walker, Mapping[str, Any], int], Any] = _MAKERS.get(kind, _Walker.make_anything)
        return maker(self, schema, depth)

    def _target(self, ref: str, schema: Mapping[str, Any]) -> dict[str, Any]:
        target: Any = self.root
        try:
            for part in ref.removeprefix("#/").split("/"):
                target = target[part]
        except (KeyError, TypeError):
            raise SchemaValueError(f"$ref {ref!r} does not resolve inside the schema") from None
        return _merge(cast("Mapping[str, Any]", target), {k: v for k, v in schema.items() if k != "$ref"})

    def _branch(self, branches: Sequence[Mapping[str, Any]], depth: int) -> Mapping[str, Any]:
        if depth >= SOFT_DEPTH:
            # Deep down, prefer the branches that end here (``null``, a scalar) over more references.
            shallow = [b for b in branches if "$ref" not in b and b.get("type") not in ("object", "array")]
            branches = shallow or branches
        return branches[self.chooser.index(len(branches))]

    def make_object(self, schema: Mapping[str, Any], depth: int) -> dict[str, Any]:
        properties: Mapping[str, Any] = schema.get("properties") or {}
        required: set[str] = set(schema.get("required") or ())
        made: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or (depth < SOFT_DEPTH and self.chooser.index(2)):
                made[name] = self.value(sub, depth)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping) and not properties:
            least = int(schema.get("minProperties", 0))
            for _ in range(self.chooser.integer(least, least if depth >= SOFT_DEPTH else least + 2)):
                made[self.chooser.text(1, 8)] = self.value(cast("Mapping[str, Any]", extra), depth)
        return made

    def make_array(self, schema: Mapping[str, Any], depth: int) -> list[Any]:
        prefix: list[Mapping[str, Any]] = list(schema.get("prefixItems") or ())
        least = max(int(schema.get("minItems", 0)), len(prefix))
        most = schema.get("maxItems")
        longest = least if depth >= SOFT_DEPTH else least + 3
        size = self.chooser.integer(least, longest if most is None else min(int(most), longest))
        items = schema.get("items")
        made = [self.value(sub, depth) for sub in prefix[:size]]
        if isinstance(items, Mapping):
            made += [self.value(cast("Mapping[str, Any]", items), depth) for _ in range(size - len(made))]
        return _unique(made) if schema.get("uniqueItems") else made

    def make_string(self, schema: Mapping[str, Any], depth: int) -> str:
        low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
        pattern, form = schema.get("pattern"), schema.get("format")
        if isinstance(pattern, str):
            return _fit(lambda: pattern_string(pattern, self.chooser), low, high, f"pattern {pattern!r}")
        if isinstance(form, str) and form in _FORMATS:
            return _FORMATS[form](self.chooser)
        return self.chooser.text(low, None if high is None else int(high))

    def make_integer(self, schema: Mapping[str, Any], depth: int) -> int:
        low, high = _bounds(schema, 1)
        first = None if low is None else math.ceil(low)
        last = None if high is None else math.floor(high)
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 1:
            first = None if first is None else -(-first // step)
            last = None if last is None else last // step
            return self.chooser.integer(first, last) * step
        return self.chooser.integer(first, last)

    def make_number(self, schema: Mapping[str, Any], depth: int) -> float:
        low, high = _bounds(schema, 1e-6)
        return self.chooser.number(low, high)

    def make_boolean(self, schema: Mapping[str, Any], depth: int) -> bool:
        return bool(self.chooser.index(2))

    def make_null(self, schema: Mapping[str, Any], depth: int) -> None:
        return None

    def make_anything(self, schema: Mapping[str, Any], depth: int) -> str:
        return self.chooser.text(1, 8)  # no type: anything goes, and a word is the plainest


_MAKERS: Final[dict[object, Callable[[_Walker, Mapping[str, Any], int], Any]]] = {
    "object": _Walker.make_object,
    "array": _Walker.make_array,
    "string": _Walker.make_string,
    "integer": _Walker.make_integer,
    "number": _Walker.make_number,
    "boolean": _Walker.make_boolean,
    "null": _Walker.make_null,
}


def _bounds(schema: Mapping[str, Any], nudge: float) -> tuple[float | None, float | None]:
    low, high = schema.get("minimum"), schema.get("maximum")
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"] + nudge
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"] - nudge
    return low, high


def _merge(base: Mapping[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in more.items():
        if key == "properties":
            merged[key] = {**merged.get(key, {}), **value}
        elif key == "required":
            merged[key] = [*merged.get(key, []), *value]
        else:
            merged.setdefault(key, value)
    return merged


def _unique(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if value not in kept:
            kept.append(value)
    return kept


def _fit(make: Callable[[], str], low: int, high: object, what: str) -> str:
    for _ in range(50):
        text = make()
        if len(text) >= low and (high is None or len(text) <= cast("int", high)):
            return text
    raise SchemaValueError(f"no string of {what} fits its length limits")


def _date(chooser: Chooser) -> str:
    return f"{chooser.integer(2000, 2030):04d}-{chooser.integer(1, 12):02d}-{chooser.integer(1, 28):02d}"


def _time(chooser: Chooser) -> str:
    return f"{chooser.integer(0, 23):02d}:{chooser.integer(0, 59):02d}:{chooser.integer(0, 59):02d}"


_FORMATS: Final[dict[str, Callable[[Chooser], str]]] = {
    "date": _date,
    "time": _time,
    "date-time": lambda c: f"{_date(c)}T{_time(c)}Z",
    "duration": lambda c: f"P{c.integer(0, 30)}DT{c.integer(0, 23)}H",
    "email": lambda c: f"{c.text(1, 8).lower() or 'a'}@example.com",
    "uuid": lambda c: str(uuid.UUID(int=c.integer(0, 2**128 - 1), version=4)),
    "uri": lambda c: f"https://example.com/{c.text(1, 8)}",
    "hostname": lambda c: f"{c.text(1, 8).lower() or 'host'}.example.com",
    "ipv4": lambda c: ".".join(str(c.integer(0, 255)) for _ in range(4)),
    "ipv6": lambda c: ":".join(f"{c.integer(0, 0xFFFF):x}" for _ in range(8)),
}


def pattern_string(pattern: str, chooser: Chooser) -> str:
    """A string that matches the regular expression ``pattern``.

    Raises:
        SchemaValueError: the pattern uses something beyond literals, classes, groups, alternation and repeats.
    """
    parser: Any = importlib.import_module("re._parser")  # the re module's own parser (Python 3.11+)
    try:
        parsed: Any = parser.parse(pattern)
    except Exception as exc:
        raise SchemaValueError(f"pattern {pattern!r} is not a regular expression Python reads: {exc}") from exc
    groups: dict[int, str] = {}
    return _Regex(chooser, groups).sequence(parsed)


@dataclass(slots=True)
class _Regex:
    chooser: Chooser
    groups: dict[int, str]

    def sequence(self, items: Any) -> str:
        return "".join(self.item(op, arg) for op, arg in items)

    def item(self, op: Any, arg: Any) -> str:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "NOT_LITERAL":
            return next(c for c in ALPHABET if ord(c) != arg)
        if name == "ANY":
            return ALPHABET[self.chooser.index(len(ALPHABET))]
        if name == "IN":
            return self.char_in(arg)
        if name == "AT":
            return ""
        if name == "BRANCH":
            options = arg[1]
            return self.sequence(options[self.chooser.index(len(options))])
        if name == "SUBPATTERN":
            text = self.sequence(arg[3])
            if arg[0] is not None:
                self.groups[arg[0]] = text
            return text
        if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, body = arg
            count = self.chooser.integer(low, min(high, low + 3))
            return "".join(self.sequence(body) for _ in range(count))
        if name == "GROUPREF":
            return self.groups.get(arg, "")
        raise SchemaValueError(f"a pattern using {name} cannot be generated; script this agent's answers instead")

    def char_in(self, options: Any) -> str:
        if options and str(options[0][0]) == "NEGATE":
            allowed = [c for c in ALPHABET + " -." if not _matches_class(c, options[1:])]
            if not allowed:
                raise SchemaValueError("a negated character class excludes every character typedagent generates")
            return allowed[self.chooser.index(len(allowed))]
        op, arg = options[self.chooser.index(len(options))]
        kind = str(op)  # a class holds literals, ranges and categories, or is negated (above)
        if kind == "RANGE":
            return chr(self.chooser.integer(arg[0], arg[1]))
        if kind == "CATEGORY":
            return _CATEGORIES[str(arg)][self.chooser.index(len(_CATEGORIES[str(arg)]))]
        return chr(arg)


_CATEGORIES: Final = {
    "CATEGORY_DIGIT": string.digits,
    "CATEGORY_NOT_DIGIT": string.ascii_letters,
    "CATEGORY_WORD": ALPHABET + "_",
    "CATEGORY_NOT_WORD": " -.",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": ALPHABET,
}


def _matches_class(char: str, options: Any) -> bool:
    for op, arg in options:
        kind = str(op)
        if (kind == "LITERAL" and ord(char) == arg) or (kind == "RANGE" and arg[0] <= ord(char) <= arg[1]):
            return True
        if kind == "CATEGORY" and char in _CATEGORIES[str(arg)]:
            return True
    return False
