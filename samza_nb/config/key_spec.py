"""A configuration key's specification (:class:`KeySpec`: pattern, default, type, allowed values) and
the parsers of typed values; the catalogue (:mod:`.catalogue`) is a table of them."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from samza_nb.errors import ConfigError

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def parse_int(key: str, raw: str, minimum: int | None = None) -> int:
    """``raw`` as an int (at least ``minimum``), or a ConfigError naming the key and value."""
    try:
        value = int(raw.strip())
    except (ValueError, AttributeError):
        allowed = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise ConfigError(f"{key}={raw!r} is not valid: expected {allowed}", key=key) from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{key}={raw!r} is not valid: expected an integer >= {minimum}", key=key)
    return value


def parse_bool(key: str, raw: str) -> bool:
    """``raw`` as a bool (true/false, yes/no, 1/0, on/off), or a ConfigError naming the key and value."""
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(f"{key}={raw!r} is not valid: expected true or false", key=key)


def parse_list(raw: str) -> list[str]:
    """A comma-separated list, blanks dropped."""
    return [item.strip() for item in raw.split(",") if item.strip()]


def parse_choice(key: str, raw: str, choices: tuple[str, ...]) -> str:
    """The one of ``choices`` that ``raw`` names (case-insensitive; spelled as in ``choices``), or a
    ConfigError listing them."""
    text = raw.strip().lower()
    for choice in choices:
        if choice.lower() == text:
            return choice
    raise ConfigError(f"{key}={raw!r} is not valid: expected one of {', '.join(choices)}", key=key)


@dataclass(frozen=True)
class KeySpec:
    """One known key: its pattern, default (a string, or None for unset), kind and description."""

    pattern: str
    default: str | None
    kind: str  # "int", "int>=0", "int>=1", "bool", "str", "list", "choice", "class"
    description: str
    choices: tuple[str, ...] = ()

    @functools.cached_property
    def _regex(self) -> re.Pattern[str] | None:
        """The pattern as a regex, compiled when first needed (None for a literal key: compared as is)."""
        if "<" not in self.pattern:
            return None
        parts = []
        for segment in re.split(r"(<[a-z]+>)", self.pattern):
            if segment in ("<stream>", "<property>"):
                parts.append(r"(.+)")
            elif segment.startswith("<") and segment.endswith(">"):
                parts.append(r"([^.]+)")
            else:
                parts.append(re.escape(segment))
        return re.compile("^" + "".join(parts) + "$")

    @functools.cached_property
    def _ends(self) -> tuple[str, str]:
        """The pattern's literal text before its first placeholder and after its last one."""
        before, _, after = self.pattern.rpartition(">")
        return self.pattern.partition("<")[0], after if before else ""

    def matches(self, key: str) -> bool:
        """True when ``key`` is an instance of this pattern."""
        if "<" not in self.pattern:
            return key == self.pattern
        head, tail = self._ends  # (a key without them cannot match: no regex compiled to say so)
        if not (key.startswith(head) and key.endswith(tail)):
            return False
        regex = self._regex
        return regex is not None and regex.match(key) is not None

    def parse(self, key: str, raw: str) -> Any:
        """The typed value of ``raw`` for ``key``; a ConfigError naming key, value and what is allowed."""
        kind = self.kind
        if kind == "int":
            return parse_int(key, raw)
        if kind.startswith("int>="):
            return parse_int(key, raw, minimum=int(kind[5:]))
        if kind == "bool":
            return parse_bool(key, raw)
        if kind == "list":
            return parse_list(raw)
        if kind == "choice":
            return parse_choice(key, raw, self.choices)
        if kind == "class":
            text = raw.strip()
            if not re.match(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+$", text):
                raise ConfigError(
                    f"{key}={raw!r} is not valid: expected a dotted path such as package.module.Name",
                    key=key,
                )
            return text
        return raw.strip()


__all__ = ["KeySpec", "parse_bool", "parse_choice", "parse_int", "parse_list"]
