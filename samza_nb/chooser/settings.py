"""The chooser's configuration, read and checked once: batch size, priorities, bootstrap streams."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from samza_nb.api.streams import SystemStream
from samza_nb.chooser.batching import BATCH_SIZE_KEY
from samza_nb.config.key_spec import parse_bool, parse_int, parse_list
from samza_nb.errors import ConfigError, SamzaError

TIME_ALIGNED_KEY = "task.chooser.time.aligned"
CHOOSER_CLASS_KEY = "task.chooser.class"
INPUTS_KEY = "task.inputs"

_PRIORITY_KEY = re.compile(r"^systems\.([^.]+)\.streams\.(.+)\.samza\.priority$")
_SEED_PRIORITY_KEY = re.compile(r"^task\.chooser\.priorities\.([^.]+)\.(.+)$")
_BOOTSTRAP_KEY = re.compile(r"^systems\.([^.]+)\.streams\.(.+)\.samza\.bootstrap$")


@dataclass(frozen=True)
class ChooserSettings:
    """What the DefaultChooser is built from.

    ``priorities`` holds the explicitly configured tiers only; :meth:`tiers` adds the defaults.
    """

    inputs: tuple[SystemStream, ...] = ()
    batch_size: int = 0
    priorities: Mapping[SystemStream, int] = field(default_factory=dict)
    priority_keys: Mapping[SystemStream, str] = field(default_factory=dict)
    bootstrap_streams: frozenset[SystemStream] = frozenset()
    time_aligned: bool = False

    @property
    def uses_priority(self) -> bool:
        """True when any stream has a priority or is a bootstrap stream: the tiered layer exists."""
        return bool(self.priorities) or bool(self.bootstrap_streams)

    @property
    def bootstrap_priority(self) -> int:
        """The tier of bootstrap streams without an explicit priority: one above every explicit priority
        and above the default tier 0 (Samza uses Int.MaxValue; this keeps tiers readable)."""
        return max([0, *self.priorities.values()]) + 1

    def tiers(self) -> dict[SystemStream, int]:
        """Every input at priority 0, bootstrap streams at :attr:`bootstrap_priority`, explicit priorities
        on top; empty when neither priorities nor bootstrap streams are configured."""
        if not self.uses_priority:
            return {}
        tiers = dict.fromkeys(self.inputs, 0)
        bootstrap_priority = self.bootstrap_priority
        for stream in sorted(self.bootstrap_streams):
            tiers[stream] = bootstrap_priority
        tiers.update(self.priorities)
        return tiers


def read_chooser_settings(
    config: Mapping[str, str], inputs: Iterable[SystemStream | str] | None = None
) -> ChooserSettings:
    """Read the chooser keys of ``config``; a :class:`ConfigError` naming the key for any bad value.

    ``inputs`` are the job's input streams; when None they are read from ``task.inputs``. A stream given
    a priority or declared a bootstrap stream must be one of them.
    """
    streams = _inputs(config, inputs)
    known = frozenset(streams)
    listed = ", ".join(str(s) for s in streams) or "(none)"

    def check_input(stream: SystemStream, key: str, what: str) -> None:
        if stream not in known:
            raise ConfigError(
                f"{key} makes {stream} a {what}, but it is not an input of the job (inputs: {listed})",
                key=key,
            )

    batch_size = 0
    raw_batch = config.get(BATCH_SIZE_KEY)
    if raw_batch is not None:
        batch_size = parse_int(BATCH_SIZE_KEY, raw_batch, minimum=0)

    priorities: dict[SystemStream, int] = {}
    priority_keys: dict[SystemStream, str] = {}
    bootstrap: set[SystemStream] = set()
    for key in sorted(config):
        match = _PRIORITY_KEY.match(key) or _SEED_PRIORITY_KEY.match(key)
        if match is not None:
            stream = SystemStream(match.group(1), match.group(2))
            priority = parse_int(key, config[key])
            check_input(stream, key, "priority stream")
            if stream in priorities and priorities[stream] != priority:
                raise ConfigError(
                    f"{priority_keys[stream]}={priorities[stream]} and {key}={priority} give {stream} "
                    "two different priorities",
                    key=key,
                )
            priorities[stream] = priority
            priority_keys.setdefault(stream, key)
            continue
        match = _BOOTSTRAP_KEY.match(key)
        if match is not None and parse_bool(key, config[key]):
            stream = SystemStream(match.group(1), match.group(2))
            check_input(stream, key, "bootstrap stream")
            bootstrap.add(stream)

    time_aligned = False
    raw_aligned = config.get(TIME_ALIGNED_KEY)
    if raw_aligned is not None:
        time_aligned = parse_bool(TIME_ALIGNED_KEY, raw_aligned)

    return ChooserSettings(
        inputs=streams,
        batch_size=batch_size,
        priorities=priorities,
        priority_keys=priority_keys,
        bootstrap_streams=frozenset(bootstrap),
        time_aligned=time_aligned,
    )


def _inputs(
    config: Mapping[str, str], inputs: Iterable[SystemStream | str] | None
) -> tuple[SystemStream, ...]:
    if inputs is not None:
        streams: list[SystemStream] = []
        for item in inputs:
            stream = item if isinstance(item, SystemStream) else SystemStream.parse(str(item))
            if stream not in streams:
                streams.append(stream)
        return tuple(streams)
    raw = config.get(INPUTS_KEY)
    if raw is None:
        return ()
    streams = []
    for item in parse_list(raw):
        try:
            stream = SystemStream.parse(item)
        except SamzaError as exc:
            raise ConfigError(f"{INPUTS_KEY}={raw!r} is not valid: {exc}", key=INPUTS_KEY) from None
        if stream not in streams:
            streams.append(stream)
    return tuple(streams)
