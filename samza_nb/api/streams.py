"""Stream identities and the envelopes that carry messages in and out of tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Final

END_OF_STREAM_OFFSET: Final[str] = "END_OF_STREAM"
"""The offset of the end-of-stream envelope that follows the last message of a bounded partition."""

Headers = tuple[tuple[str, bytes | None], ...]
"""Record headers as Kafka carries them: ``(name, value)`` pairs in order (names may repeat); () = none. A
value is None where Kafka carries a null header value (Java's ``Header.value()`` may be null)."""

NO_HEADERS: Final[Headers] = ()


@dataclass(frozen=True, order=True, slots=True)
class SystemStream:
    """A stream on a system, e.g. ``SystemStream("kafka", "page-views")``."""

    system: str
    stream: str

    def __str__(self) -> str:
        return f"{self.system}.{self.stream}"

    @classmethod
    def parse(cls, text: str) -> SystemStream:
        """Parse ``"system.stream"`` (the stream may itself contain dots)."""
        system, sep, stream = text.strip().partition(".")
        if not sep or not system or not stream:
            from samza_nb.errors import SamzaError

            raise SamzaError(f"{text!r} is not a stream name of the form '<system>.<stream>'")
        return cls(system, stream)


class SystemStreamPartition:
    """One partition of a stream: the unit of ordering, offsets and checkpoints.

    Immutable, hashable and ordered by (system, stream, partition). Instances are interned: equal SSPs are
    the same object, so the per-message dictionary lookups the container does compare by identity.
    """

    __slots__ = ("partition", "stream", "system")
    __match_args__ = ("system", "stream", "partition")

    _interned: ClassVar[dict[tuple[str, str, int], SystemStreamPartition]] = {}

    system: str
    stream: str
    partition: int

    def __new__(cls, system: str, stream: str, partition: int) -> SystemStreamPartition:
        key = (system, stream, partition)
        existing = cls._interned.get(key)
        if existing is not None:
            return existing
        if not isinstance(system, str) or not isinstance(stream, str):
            raise TypeError(f"system and stream must be str, got {system!r}, {stream!r}")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise TypeError(f"partition must be an int >= 0, got {partition!r}")
        self = object.__new__(cls)
        object.__setattr__(self, "system", system)
        object.__setattr__(self, "stream", stream)
        object.__setattr__(self, "partition", partition)
        return cls._interned.setdefault(key, self)

    def __reduce__(self) -> tuple[type[SystemStreamPartition], tuple[str, str, int]]:
        return (SystemStreamPartition, (self.system, self.stream, self.partition))

    def __copy__(self) -> SystemStreamPartition:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SystemStreamPartition:
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"SystemStreamPartition is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"SystemStreamPartition is immutable; cannot delete {name!r}")

    # Interned: equal partitions are the same object, so identity is equality and the id-based hash of
    # ``object`` (computed in C, no Python call per dictionary lookup) is consistent with it.
    __hash__ = object.__hash__
    __eq__ = object.__eq__

    def _key(self) -> tuple[str, str, int]:
        return (self.system, self.stream, self.partition)

    def __lt__(self, other: SystemStreamPartition) -> bool:
        return self._key() < other._key()

    def __le__(self, other: SystemStreamPartition) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: SystemStreamPartition) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: SystemStreamPartition) -> bool:
        return self._key() >= other._key()

    @property
    def system_stream(self) -> SystemStream:
        """The stream this partition belongs to."""
        return SystemStream(self.system, self.stream)

    def __repr__(self) -> str:
        return (
            f"SystemStreamPartition(system={self.system!r}, stream={self.stream!r}, "
            f"partition={self.partition!r})"
        )

    def __str__(self) -> str:
        return f"{self.system}.{self.stream}#{self.partition}"


class IncomingMessageEnvelope:
    """A message read from an input partition, with its offset (a string), key, event timestamp (ms) and
    record headers (``(name, value)`` pairs, ``()`` when the system carries none)."""

    __slots__ = ("headers", "key", "message", "offset", "ssp", "timestamp")

    def __init__(
        self,
        ssp: SystemStreamPartition,
        offset: str,
        key: Any,
        message: Any,
        timestamp: int | None = None,
        headers: Headers = NO_HEADERS,
    ) -> None:
        self.ssp = ssp
        self.offset = offset
        self.key = key
        self.message = message
        self.timestamp = timestamp
        self.headers = headers

    @property
    def is_end_of_stream(self) -> bool:
        """True for the envelope that marks the end of a bounded partition."""
        return self.offset is END_OF_STREAM_OFFSET or self.offset == END_OF_STREAM_OFFSET

    @classmethod
    def end_of_stream(cls, ssp: SystemStreamPartition) -> IncomingMessageEnvelope:
        """The end-of-stream envelope of ``ssp``."""
        return cls(ssp, END_OF_STREAM_OFFSET, None, None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IncomingMessageEnvelope):
            return NotImplemented
        return (
            self.ssp == other.ssp
            and self.offset == other.offset
            and self.key == other.key
            and self.message == other.message
            and self.timestamp == other.timestamp
            and self.headers == other.headers
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"IncomingMessageEnvelope({self.ssp!s}, offset={self.offset!r}, key={self.key!r}, "
            f"message={self.message!r}, timestamp={self.timestamp!r}"
            + (f", headers={self.headers!r})" if self.headers else ")")
        )


@dataclass(slots=True, unsafe_hash=True, init=False)
class OutgoingMessageEnvelope:
    """A message a task sends to a stream: a value, compared and hashed by its fields. Do not change an
    envelope once sent: the container may hand it to the producer later in the slice.

    ``partition`` picks the partition directly; otherwise ``partition_key`` (or ``key``) is hashed
    stably; with neither, the producer spreads messages round robin. ``timestamp`` (ms of event time, or
    None) travels with the message where the system can carry it (in-memory, durable log, Kafka), and so do
    ``headers`` (``(name, value)`` pairs; a system that cannot carry them refuses a message that has some).
    """

    # Not frozen: a frozen dataclass sets each field through object.__setattr__, which made building
    # the envelope the most expensive part of sending a message. The __init__ is written out: the one
    # dataclass generates for a slots class cost 1.7x as much here (Python 3.11), on every message sent.

    system_stream: SystemStream
    message: Any
    key: Any = None
    partition_key: Any = None
    partition: int | None = None
    timestamp: int | None = None
    headers: Headers = NO_HEADERS

    def __init__(
        self,
        system_stream: SystemStream,
        message: Any,
        key: Any = None,
        partition_key: Any = None,
        partition: int | None = None,
        timestamp: int | None = None,
        headers: Headers = NO_HEADERS,
    ) -> None:
        self.system_stream = system_stream
        self.message = message
        self.key = key
        self.partition_key = partition_key
        self.partition = partition
        self.timestamp = timestamp
        self.headers = headers
