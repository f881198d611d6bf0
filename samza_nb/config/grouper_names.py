"""The names of the groupers (``job.systemstreampartition.grouper.factory``): samza_nb's short names and
Apache Samza's factory class names, which name the same two groupers.

Samza writes the factory's class name into every checkpoint key, so a checkpoint topic is shared with a
Java Samza job only when both sides spell the grouper the same way: :func:`grouper_class_name` gives the
class name of either spelling, and :func:`canonical_grouper` the short name.
"""

from __future__ import annotations

from typing import Final

from samza_nb.errors import ConfigError

GROUPER_KEY: Final[str] = "job.systemstreampartition.grouper.factory"
DEFAULT_GROUPER: Final[str] = "group-by-partition"

GROUPER_CLASS_NAMES: Final[dict[str, str]] = {
    "group-by-partition": "org.apache.samza.container.grouper.stream.GroupByPartitionFactory",
    "group-by-ssp": "org.apache.samza.container.grouper.stream.GroupBySystemStreamPartitionFactory",
}
"""Short name → Samza's factory class name (samza-core ``container/grouper/stream/*Factory.java``)."""

GROUPER_CHOICES: Final[tuple[str, ...]] = (*GROUPER_CLASS_NAMES, *GROUPER_CLASS_NAMES.values())
"""Every accepted spelling of ``job.systemstreampartition.grouper.factory`` (case-insensitive)."""

_BY_LOWER: Final[dict[str, str]] = {
    **{short: short for short in GROUPER_CLASS_NAMES},
    **{cls.lower(): short for short, cls in GROUPER_CLASS_NAMES.items()},
}


def short_grouper_name(value: str | None) -> str | None:
    """The short name of a grouper spelled either way (case-insensitive; None or blank: the default), or
    None when ``value`` names no grouper samza_nb knows."""
    text = (value or "").strip().lower() or DEFAULT_GROUPER
    return _BY_LOWER.get(text)


def canonical_grouper(value: str | None) -> str:
    """The short name of the grouper ``value`` spells (short or class name; unset: the default); a
    ConfigError naming the key and the accepted names otherwise."""
    short = short_grouper_name(value)
    if short is None:
        raise ConfigError(
            f"{GROUPER_KEY}={value!r} is not valid: expected one of {', '.join(GROUPER_CHOICES)}",
            key=GROUPER_KEY,
        )
    return short


def grouper_class_name(value: str | None) -> str:
    """Samza's factory class name of the grouper ``value`` spells (what a checkpoint key holds)."""
    return GROUPER_CLASS_NAMES[canonical_grouper(value)]


__all__ = [
    "DEFAULT_GROUPER",
    "GROUPER_CHOICES",
    "GROUPER_CLASS_NAMES",
    "GROUPER_KEY",
    "canonical_grouper",
    "grouper_class_name",
    "short_grouper_name",
]
