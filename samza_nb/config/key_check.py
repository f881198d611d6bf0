"""Unknown configuration keys that look like typos of known ones (``task.max.concurency``).

A key the catalogue knows (an instance of one of its patterns) is fine. An unknown key is flagged only
when it is a near miss of a catalogue key: plug-ins (a custom system, chooser or store factory, a user's
task) read keys of their own that the catalogue cannot know, so an unknown key on its own says nothing.

The rule: each catalogue pattern is filled in with the unknown key's own segments (``<system>`` takes the
key's segment at its place, ``<stream>`` and ``<property>`` one or more segments), so the names a user
chose never count as a difference. The dotted segments both keys share at the start and at the end are
set aside; what is left of the key must be close to what is left of the pattern (difflib's ratio >=
:data:`CUTOFF`). ``task.max.concurency`` leaves ``concurency`` against ``concurrency`` (0.95): a typo;
``systems.numbers.streams.ints.count`` (a custom system's key) leaves ``count`` against ``path`` or
``partitions``: no near miss, so it is not flagged.

A near miss is an error (:func:`check_key_spelling`, which the notebook's config cells, ``samza-nb run``
and :class:`~samza_nb.runtime.LocalJobRunner` call): a job configured with ``systems.mem.samza.ofset.default``
would otherwise run and quietly read from the default offset. A misspelt system name is caught the same
way: keys under a system that has no ``systems.<system>.samza.factory`` (``systems.mst.samza.offset.default``)
while a system of a close name has one (``mist``) name the key that system would have
(``systems.mist.samza.offset.default``).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterable, Iterator

from samza_nb.config.catalogue import KEYS, spec_for
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM
from samza_nb.errors import ConfigError

CUTOFF = 0.75
"""Least difflib ratio between the differing parts of a key and a catalogue key for a near miss."""

_MULTI = ("<stream>", "<property>")

SAMZA_KEYS = frozenset(
    {
        "job.non-logged.store.base.dir",
        "job.coordinator.replication.factor",
        "job.config.rewriters",
        "job.container.single.thread.mode",
        "task.opts",
        "task.java.home",
        "task.execute",
        "task.log4j.system",
        "task.drop.deserialization.errors",
        "task.drop.serialization.errors",
        "task.drop.producer.errors",
        "task.ignored.exceptions",
        "task.name.grouper.factory",
    }
)
"""Keys of Apache Samza the catalogue does not describe (samza_nb ignores them or reads them elsewhere):
never flagged as typos, since they are real keys a config carried over from Java Samza may hold."""


@functools.lru_cache(maxsize=1024)
def suggestion_for(key: str) -> str | None:
    """The catalogue key that the unknown ``key`` is most likely a typo of (with ``key``'s own names in
    its placeholders), or None when ``key`` is known or is no near miss of any catalogue key (remembered:
    a config is checked more than once on its way to a run)."""
    if spec_for(key) is not None or key in SAMZA_KEYS:
        return None
    near = []
    for candidate, own, known in sorted(set(_candidates(key))):
        if "<" in candidate:  # a placeholder the key did not fill: no key to suggest
            continue
        left, right = _differing_parts(own, known)
        if difflib.SequenceMatcher(None, left, right).ratio() >= CUTOFF:
            near.append(candidate)
    best = difflib.get_close_matches(key, near, n=1, cutoff=0.0)  # the nearest of the near misses
    return best[0] if best else None


def unknown_key_warnings(keys: Iterable[str], *, strict: bool = False) -> list[str]:
    """One line per key of ``keys`` that is a near miss of a catalogue key or sits under a misspelt system
    name (in their order): ``unknown key task.max.concurency: did you mean task.max.concurrency?``. With
    ``strict``, the first such key is a :class:`ConfigError` instead (see :func:`check_key_spelling`)."""
    lines = list(_near_misses(keys))
    if strict and lines:
        raise ConfigError(lines[0][1], key=lines[0][0])
    return [line for _, line in lines]


def check_key_spelling(keys: Iterable[str], *, systems: bool = True) -> None:
    """Nothing when no key of ``keys`` looks misspelt; else a :class:`ConfigError` (``key`` set) naming the
    first such key and the key it most likely meant:
    ``unknown key task.max.concurency: did you mean task.max.concurrency?``. Keys far from every known key
    (a plug-in's or the user's own, ``myapp.greeting``) pass. ``systems``: check system names too (only a
    whole config can tell a system without a factory: ``False`` for keys that will join others)."""
    for key, line in _near_misses(keys, systems):
        raise ConfigError(line, key=key)


def _near_misses(keys: Iterable[str], systems: bool = True) -> Iterator[tuple[str, str]]:
    """(key, line) for every misspelt key: near misses of catalogue keys first, then keys under a
    system name that has no factory but is close to one that has."""
    keys = list(keys)
    flagged = set()
    for key in keys:
        suggestion = suggestion_for(key)
        if suggestion is not None:
            flagged.add(key)
            yield key, f"unknown key {key}: did you mean {suggestion}?"
    if systems:
        yield from ((key, line) for key, line in _misspelt_systems(keys) if key not in flagged)


_FACTORY = "samza.factory"


def _misspelt_systems(keys: list[str]) -> Iterator[tuple[str, str]]:
    """(key, line) for each key ``systems.<name>.…`` whose system has no factory while a system of a close
    name (difflib ratio >= :data:`CUTOFF`) has one: the line names the same key under that system."""
    by_system: dict[str, list[str]] = {}
    for key in keys:
        parts = key.split(".", 2)
        if len(parts) == 3 and parts[0] == "systems" and parts[1]:
            by_system.setdefault(parts[1], []).append(parts[2])
    with_factory = [name for name, rests in by_system.items() if _FACTORY in rests]
    for name, rests in by_system.items():
        if name in with_factory or name == DEFAULT_LOG_SYSTEM:
            continue
        near = difflib.get_close_matches(name, with_factory, n=1, cutoff=CUTOFF)
        if near:
            for rest in rests:
                yield (
                    f"systems.{name}.{rest}",
                    f"unknown key systems.{name}.{rest}: system {name!r} has no factory "
                    f"(systems.{name}.{_FACTORY}): did you mean systems.{near[0]}.{rest}?",
                )


_Fill = tuple[str, tuple[str, ...], tuple[str, ...]]
"""A catalogue pattern filled in with a key's segments: the filled key, the key's segments that no
placeholder took, and the pattern's literal segments."""


def _candidates(key: str) -> Iterator[_Fill]:
    """Every catalogue pattern filled in with ``key``'s segments, in every way its segments allow."""
    segments = key.split(".")
    for spec in KEYS:
        yield from _fill(spec.pattern.split("."), segments, 0, (), (), ())


def _fill(
    pattern: list[str],
    segments: list[str],
    at: int,
    filled: tuple[str, ...],
    own: tuple[str, ...],
    known: tuple[str, ...],
) -> Iterator[_Fill]:
    if not pattern:
        yield ".".join(filled), own + tuple(segments[at:]), known
        return
    head, rest = pattern[0], pattern[1:]
    if head in _MULTI and at < len(segments):
        for end in range(at + 1, len(segments) + 1):
            yield from _fill(rest, segments, end, filled + tuple(segments[at:end]), own, known)
    elif head.startswith("<") and at < len(segments):
        yield from _fill(rest, segments, at + 1, (*filled, segments[at]), own, known)
    elif head.startswith("<"):
        yield from _fill(rest, segments, at, (*filled, head), own, known)
    else:
        taken = tuple(segments[at : at + 1])
        yield from _fill(rest, segments, at + 1, (*filled, head), own + taken, (*known, head))


def _differing_parts(own: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, str]:
    """The dotted segments of ``own`` and ``known`` without those they share at the start and the end."""
    start = 0
    while start < min(len(own), len(known)) and own[start] == known[start]:
        start += 1
    end = 0
    while end < min(len(own), len(known)) - start and own[-1 - end] == known[-1 - end]:
        end += 1
    return ".".join(own[start : len(own) - end]), ".".join(known[start : len(known) - end])


__all__ = ["CUTOFF", "check_key_spelling", "suggestion_for", "unknown_key_warnings"]
