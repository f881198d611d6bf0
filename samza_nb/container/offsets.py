"""Where each input partition starts: after its checkpoint, or at the configured offset default."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from samza_nb.config.key_spec import parse_bool, parse_choice
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin

_DEFAULT_CHOICES = ("oldest", "upcoming", "newest")


class OffsetSetting:
    """The offset rules of one input stream: its default for partitions without checkpoint, whether its
    checkpoint is ignored (``reset.offset``), and whether it is a bootstrap stream (``samza.bootstrap``:
    a reset of it re-reads it into the state kept, the reset table of docs/how-to/operating.md)."""

    __slots__ = ("bootstrap", "default", "reset")

    def __init__(self, default: str, reset: bool, bootstrap: bool = False) -> None:
        self.default = default
        self.reset = reset
        self.bootstrap = bootstrap

    @classmethod
    def from_config(cls, config: Config, stream: SystemStream) -> OffsetSetting:
        """Read ``systems.X.streams.Y.samza.offset.default`` (then ``systems.X.samza.offset.default``,
        then "upcoming") and ``systems.X.streams.Y.samza.reset.offset``; a bad value is a ConfigError."""
        stream_key = f"systems.{stream.system}.streams.{stream.stream}.samza.offset.default"
        system_key = f"systems.{stream.system}.samza.offset.default"
        if stream_key in config:
            default = parse_choice(stream_key, config[stream_key], _DEFAULT_CHOICES)
        elif system_key in config:
            default = parse_choice(system_key, config[system_key], _DEFAULT_CHOICES)
        else:
            default = "upcoming"
        reset_key = f"systems.{stream.system}.streams.{stream.stream}.samza.reset.offset"
        reset = parse_bool(reset_key, config[reset_key]) if reset_key in config else False
        bootstrap_key = f"systems.{stream.system}.streams.{stream.stream}.samza.bootstrap"
        bootstrap = parse_bool(bootstrap_key, config[bootstrap_key]) if bootstrap_key in config else False
        return cls(default, reset, bootstrap)


class OffsetManager:
    """Computes starting offsets from checkpoints, admins and partition metadata (docs/architecture.md §3,
    rule 10)."""

    def __init__(
        self,
        config: Config,
        admins: Mapping[str, SystemAdmin],
        metadata: Mapping[SystemStreamPartition, SSPMetadata],
        streams: Iterable[SystemStream],
    ) -> None:
        self._admins = admins
        self._metadata = metadata
        # Settings are read eagerly so a bad value fails at start, naming its key.
        self._settings = {stream: OffsetSetting.from_config(config, stream) for stream in streams}

    def last_processed(
        self, ssps: Iterable[SystemStreamPartition], checkpoint: Checkpoint | None
    ) -> dict[SystemStreamPartition, str]:
        """The checkpointed offsets that still apply: of current inputs, and not of reset streams."""
        if checkpoint is None:
            return {}
        wanted = set(ssps)
        result = {}
        for ssp, offset in checkpoint.offsets.items():
            setting = self._settings.get(ssp.system_stream)
            if ssp in wanted and setting is not None and not setting.reset:
                result[ssp] = offset
        return result

    def starts_over(self, ssps: Iterable[SystemStreamPartition]) -> bool:
        """True when any of ``ssps`` ignores its checkpoint (``reset.offset``) and is not a bootstrap
        stream: the task starts over (all its offsets, its stores and changelogs dropped, its outputs in a
        new generation; the reset table of docs/how-to/operating.md). A reset bootstrap stream alone is
        re-read into the state kept."""
        return any(
            (setting := self._settings.get(ssp.system_stream)) is not None
            and setting.reset
            and not setting.bootstrap
            for ssp in ssps
        )

    def starting_offsets(
        self, ssps: Iterable[SystemStreamPartition], checkpoint: Checkpoint | None
    ) -> dict[SystemStreamPartition, str]:
        """The offset each partition's first message to process has."""
        last = self.last_processed(ssps, checkpoint)
        starting: dict[SystemStreamPartition, str] = {}
        for ssp in ssps:
            if ssp in last:
                starting[ssp] = self._admin(ssp).offset_after(last[ssp])
            else:
                starting[ssp] = self._default_offset(ssp)
        return starting

    def before_start(
        self, starting: Mapping[SystemStreamPartition, str], checkpoint: Checkpoint | None
    ) -> dict[SystemStreamPartition, int]:
        """Per partition that starts at its offset default (no checkpoint that applies) past older
        messages, how many messages it leaves unread (``upcoming`` and ``newest`` skip what the partition
        holds); integer offsets only, other partitions are left out."""
        last = self.last_processed(starting, checkpoint)
        result = {}
        for ssp, start in starting.items():
            setting = self._settings.get(ssp.system_stream)
            metadata = self._metadata.get(ssp)
            if ssp in last or setting is None or setting.default == "oldest" or metadata is None:
                continue
            try:
                skipped = int(start) - int(metadata.oldest) if metadata.oldest is not None else 0
            except ValueError:
                continue
            if skipped > 0:
                result[ssp] = skipped
        return result

    def _admin(self, ssp: SystemStreamPartition) -> SystemAdmin:
        try:
            return self._admins[ssp.system]
        except KeyError:
            raise SamzaError(f"no admin for system {ssp.system!r} of {ssp}") from None

    def _default_offset(self, ssp: SystemStreamPartition) -> str:
        setting = self._settings.get(ssp.system_stream)
        if setting is None:
            raise SamzaError(f"{ssp} is not an input of this job: it has no offset settings")
        metadata = self._metadata.get(ssp)
        if metadata is None:
            raise SamzaError(f"no metadata for partition {ssp}: does the stream have that partition?")
        if setting.default == "oldest":
            offset = metadata.oldest
        elif setting.default == "newest":
            offset = metadata.newest
        else:
            offset = metadata.upcoming
        if offset is None:  # an empty partition starts at its upcoming offset
            offset = metadata.upcoming
        if offset is None:
            raise SamzaError(f"partition {ssp} reports no upcoming offset; cannot start it")
        return offset
