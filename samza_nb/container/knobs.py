"""Live knobs: the config keys a running job lets change (``set``), checked here and applied between two
messages by the run loop's control (:mod:`samza_nb.container.steering.loop_steering`).

- ``task.max.concurrency`` (>= 1): messages in flight per task; 1 puts a sync task on the loop thread back
  on the inline run path, above 1 on the general path.
- ``task.commit.ms`` / ``task.window.ms``: the timers' periods (<= 0 turns a timer off); the timers start
  again from the moment of the change.
- ``systems.<system>.streams.<stream>.samza.priority``: the stream's chooser tier, for a job whose chooser
  has priority tiers (one priority or bootstrap stream configured at start). The envelope each partition
  already handed to the chooser keeps its old tier; the next ones get the new one.
- ``task.consumer.batch.size`` (>= 1): the batching chooser's batch size, for a job started with batching.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import SystemStream
from samza_nb.chooser.batching import BATCH_SIZE_KEY, BatchingChooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.settings import read_chooser_settings
from samza_nb.chooser.tiered_priority import TieredPriorityChooser
from samza_nb.chooser.trace import chooser_layers
from samza_nb.config.catalogue import spec_for
from samza_nb.config.key_check import suggestion_for
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.container.loop.run_loop import RunLoop

CONCURRENCY_KEY = "task.max.concurrency"
COMMIT_KEY = "task.commit.ms"
WINDOW_KEY = "task.window.ms"
PRIORITY_PATTERN = "systems.<system>.streams.<stream>.samza.priority"
LIVE_KEYS = (CONCURRENCY_KEY, COMMIT_KEY, WINDOW_KEY, BATCH_SIZE_KEY, PRIORITY_PATTERN)
"""The keys ``set`` accepts (the priority key for every input stream)."""

_PRIORITY = re.compile(r"^systems\.([^.]+)\.streams\.(.+)\.samza\.priority$")


def live_changes(changes: Mapping[str, Any] | None, keywords: Mapping[str, Any]) -> dict[str, int]:
    """The changes of ``set(changes, **keywords)``, checked and parsed: a keyword names a key with ``_`` for
    ``.`` (``task_max_concurrency=8``; priorities only in ``changes``). Any other key is a
    :class:`ConfigError` listing the live keys; a bad value one naming key and value."""
    merged: dict[str, Any] = dict(changes or {})
    for name, value in keywords.items():
        key = name.replace("_", ".")
        if key not in LIVE_KEYS:
            key = name
        merged[key] = value
    parsed: dict[str, int] = {}
    for key, raw in merged.items():
        if key not in LIVE_KEYS and not _PRIORITY.match(key):
            raise ConfigError(not_live(key), key=key)
        spec = spec_for(key)
        assert spec is not None, key
        value = spec.parse(key, str(raw).strip())
        if not isinstance(value, int) or isinstance(value, bool) or value is None:
            raise ConfigError(f"{key}={raw!r} is not valid: expected an integer", key=key)
        if key == BATCH_SIZE_KEY and value < 1:
            raise ConfigError(
                f"{key}={raw!r} is not valid live: expected an integer >= 1 (batching is turned on or off "
                "only at start)",
                key=key,
            )
        parsed[key] = value
    return parsed


def not_live(key: str) -> str:
    """Why ``key`` cannot be ``set``, in one line: a misspelt key names the key it most likely meant
    (``unknown key task.max.concurency: did you mean task.max.concurrency?``), a known key that is not live
    says so, an unknown one says that; each lists the live keys."""
    live = f"the live keys are {', '.join(LIVE_KEYS)}"
    dotted = key.replace("_", ".")  # a keyword's name (task_max_concurency)
    suggestion = suggestion_for(key) or (suggestion_for(dotted) if dotted != key else None)
    if suggestion is not None:
        fixed = "" if suggestion in LIVE_KEYS or _PRIORITY.match(suggestion) else " (it cannot change live)"
        return f"unknown key {key}: did you mean {suggestion}?{fixed} ({live})"
    if spec_for(key) is not None:
        return f"{key} cannot change while the job runs; {live}"
    return f"unknown key {key}: no config key has that name ({live})"


def layers(chooser: MessageChooser) -> tuple[BatchingChooser | None, TieredPriorityChooser | None]:
    """The batching and priority layers of a chooser composition (None where it has none)."""
    found = chooser_layers(chooser)
    return found.batching, found.tiered


def check_against(changes: Mapping[str, int], chooser: MessageChooser, inputs: set[SystemStream]) -> None:
    """A :class:`ConfigError` for a change this job's chooser cannot take live (no batching layer, no
    priority tiers, a stream that is not an input)."""
    batching, tiered = layers(chooser)
    for key in changes:
        if key == BATCH_SIZE_KEY and batching is None:
            raise ConfigError(
                f"{key} can change live only in a job started with batching ({key} >= 1 at start)", key=key
            )
        match = _PRIORITY.match(key)
        if match is None:
            continue
        stream = SystemStream(match.group(1), match.group(2))
        if stream not in inputs:
            names = ", ".join(sorted(str(s) for s in inputs))
            raise ConfigError(f"{key}: {stream} is not an input of this job (inputs: {names})", key=key)
        if tiered is None:
            raise ConfigError(
                f"{key} can change live only in a job started with stream priorities (a priority or "
                "bootstrap stream configured at start, e.g. this key = 0)",
                key=key,
            )


def apply(loop: RunLoop, changes: Mapping[str, int]) -> None:
    """Apply checked ``changes`` to a running loop (on its thread, between two messages)."""
    state = loop.state
    batching, tiered = layers(state.consumers.chooser)
    periods: dict[str, int] = {}
    for key, value in changes.items():
        if key == CONCURRENCY_KEY:
            for ti in state.tasks:
                ti.set_concurrency(value)
        elif key == COMMIT_KEY:
            periods["commit_ms"] = value
        elif key == WINDOW_KEY:
            periods["window_ms"] = value
        elif key == BATCH_SIZE_KEY and batching is not None:
            batching.set_batch_size(value)
        elif tiered is not None and (match := _PRIORITY.match(key)) is not None:
            tiered.set_priority(SystemStream(match.group(1), match.group(2)), value, _tier_chooser(tiered))
    if periods:
        loop.set_periods(**periods)


def values(loop: RunLoop) -> dict[str, str]:
    """The live knobs' values in force, as config strings."""
    state = loop.state
    result = {
        CONCURRENCY_KEY: str(state.tasks[0].max_concurrency if state.tasks else 1),
        COMMIT_KEY: str(state.settings.commit_ms),
        WINDOW_KEY: str(state.settings.window_ms),
    }
    batching, tiered = layers(state.consumers.chooser)
    if batching is not None:
        result[BATCH_SIZE_KEY] = str(batching.batch_size)
    if tiered is not None:
        for stream, priority in sorted(tiered.priorities.items(), key=lambda item: str(item[0])):
            result[f"systems.{stream.system}.streams.{stream.stream}.samza.priority"] = str(priority)
    return result


def _tier_chooser(tiered: TieredPriorityChooser) -> Callable[[], MessageChooser]:
    """A new tier's chooser: of the kind the other tiers use (round robin or time-aligned)."""
    kind = type(tiered.default) if tiered.default is not None else RoundRobinChooser
    return kind


def config_values(config: Config) -> dict[str, str]:
    """The live knobs' values a job started with ``config`` would have (before it runs)."""
    result = {key: str(config.value(key)) for key in (CONCURRENCY_KEY, COMMIT_KEY, WINDOW_KEY)}
    if config.value(BATCH_SIZE_KEY):
        result[BATCH_SIZE_KEY] = str(config.value(BATCH_SIZE_KEY))
    # As the chooser will build its tiers: every input at 0 once any priority or bootstrap stream is set.
    tiers = read_chooser_settings(config).tiers()
    for stream, priority in sorted(tiers.items(), key=lambda item: str(item[0])):
        result[f"systems.{stream.system}.streams.{stream.stream}.samza.priority"] = str(priority)
    return result
