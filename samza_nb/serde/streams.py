"""The serdes of a system's streams (Kafka, the durable log): how message keys and values become bytes.

Such a system carries bytes; by default it reads and writes them unchanged. A serde name (any name the
:class:`~samza_nb.serde.registry.SerdeRegistry` knows: a built-in, a ``serializers.registry.<name>.class``,
a Samza factory class name or a dotted path) turns them into Python values on the way in and back into
bytes on the way out: the same serdes, with the same bytes, as stores use.

Config: ``systems.<system>.samza.key.serde`` / ``systems.<system>.samza.msg.serde`` for every stream of the
system, overridden per stream by ``systems.<system>.streams.<stream>.samza.key.serde`` / ``.samza.msg.serde``.
A null (a tombstone, or a message without key) is ``None`` whatever the serde. Store changelogs stay bytes
unless configured per stream (the stores serialize their own records).
"""

from __future__ import annotations

from samza_nb.config import Config
from samza_nb.config.stores import store_changelogs
from samza_nb.serde.base import Serde
from samza_nb.serde.builtin import BytesSerde
from samza_nb.serde.registry import SerdeRegistry


class StreamSerdes:
    """The key and message serdes of the streams of one system, from its config (cached per stream).

    Names resolve through ``registry`` (by default one built from ``config``); a bad name is a
    :class:`~samza_nb.errors.ConfigError` naming the key that set it.
    """

    def __init__(self, config: Config, system: str, registry: SerdeRegistry | None = None) -> None:
        self.config = config
        self.system = system
        self.registry = registry if registry is not None else SerdeRegistry.from_config(config)
        self._serdes: dict[tuple[str, str], Serde] = {}
        self._changelogs: frozenset[str] | None = None

    def key_serde(self, stream: str) -> Serde:
        """The key serde of ``stream`` (``""``: the system-wide one)."""
        return self._serde(stream, "key")

    def msg_serde(self, stream: str) -> Serde:
        """The message serde of ``stream`` (``""``: the system-wide one)."""
        return self._serde(stream, "msg")

    def _serde(self, stream: str, kind: str) -> Serde:
        cached = self._serdes.get((stream, kind))
        if cached is not None:
            return cached
        system_key = f"systems.{self.system}.samza.{kind}.serde"
        stream_key = f"systems.{self.system}.streams.{stream}.samza.{kind}.serde"
        serde: Serde
        if stream and stream_key in self.config:
            serde = self.registry.get(self.config[stream_key], key=stream_key)
        elif stream and stream in self.changelog_streams():
            serde = BytesSerde()  # stores serialize their own records
        elif system_key in self.config:
            serde = self.registry.get(self.config[system_key], key=system_key)
        else:
            serde = BytesSerde(unset_key=system_key)
        self._serdes[(stream, kind)] = serde
        return serde

    def changelog_streams(self) -> frozenset[str]:
        """The streams of this system that are store changelogs (``stores.<name>.changelog`` =
        ``<system>.<stream>``, or a bare stream on the job's changelog or default system). They carry the
        stores' own bytes: their serde is bytes unless configured per stream."""
        if self._changelogs is None:
            streams = store_changelogs(self.config).values()
            self._changelogs = frozenset(s.stream for s in streams if s.system == self.system)
        return self._changelogs


def is_identity(serde: Serde) -> bool:
    """True for the bytes serde, which systems skip entirely (no call per message)."""
    return type(serde) is BytesSerde


__all__ = ["StreamSerdes", "is_identity"]
