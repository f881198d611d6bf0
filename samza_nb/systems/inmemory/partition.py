"""One partition of an in-memory stream (:class:`InMemoryPartition`), and the partition of a key that is
the same in every process (:func:`stable_partition`)."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from samza_nb.api.streams import (
    NO_HEADERS,
    Headers,
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)


def plain_batch(envelopes: Sequence[OutgoingMessageEnvelope], stream: SystemStream) -> bool:
    """True when every one of ``envelopes`` goes to the ``SystemStream`` object ``stream`` (the same
    object, as a task's sends usually share one), names no partition and has no headers: what a batch
    append must otherwise check envelope by envelope.

    One loop in Python, on purpose: the interpreter specializes its slot reads (``envelope.partition``),
    which costs half of what one C-speed ``map(operator.attrgetter(...))`` pass per field costs."""
    for envelope in envelopes:
        if envelope.system_stream is not stream or envelope.partition is not None or envelope.headers:
            return False
    return True


def stable_partition(key: Any, partitions: int) -> int:
    """A partition for ``key`` that is the same in every process (unlike ``hash`` of a str)."""
    if isinstance(key, bool):
        key = int(key)
    if isinstance(key, int):
        return key % partitions
    if isinstance(key, bytes):
        data = key
    elif isinstance(key, str):
        data = key.encode("utf-8")
    else:
        data = repr(key).encode("utf-8")
    return zlib.crc32(data) % partitions


class InMemoryPartition:
    """One partition: its messages in offset order, and whether it has ended.

    Messages sent one by one are kept as envelopes (``sent``: a test's input is built once, before
    its job runs). From the first batch append on, messages are kept as plain keys, values and
    timestamps (``keys``/``messages``/``timestamps``, the offsets after ``sent``'s) and every read
    builds their envelopes anew: a job's output and intermediate streams cost what their values cost,
    and the envelopes live only as long as their reader keeps them (a partition keeping them all would
    make each full garbage collection walk every message the stream ever had). Headers of those are kept
    apart (``headers``: index in ``messages`` → headers, only for messages that have some), so a stream
    without headers costs nothing for them. Used under the broker's lock.
    """

    __slots__ = ("ended", "headers", "keys", "messages", "sent", "ssp", "timestamps")

    def __init__(self, ssp: SystemStreamPartition) -> None:
        self.ssp = ssp
        self.sent: list[IncomingMessageEnvelope] = []
        self.keys: list[Any] = []
        self.messages: list[Any] = []
        self.timestamps: list[int | None] = []
        self.headers: dict[int, Headers] = {}
        self.ended = False

    def append(
        self, offset: str, key: Any, message: Any, timestamp: int | None, headers: Headers = NO_HEADERS
    ) -> None:
        """Append one message (``offset`` is its offset: ``len(self)`` as a string)."""
        if self.messages:
            if headers:
                self.headers[len(self.messages)] = headers
            self.keys.append(key)
            self.messages.append(message)
            self.timestamps.append(timestamp)
        else:
            self.sent.append(IncomingMessageEnvelope(self.ssp, offset, key, message, timestamp, headers))

    def extend(self, batch: Sequence[OutgoingMessageEnvelope], headers: Mapping[int, Headers]) -> None:
        """Append the messages of ``batch`` (in order); ``headers``: the checked headers of those of them
        that have some, by ``id`` of the envelope (empty when none has)."""
        if headers:
            first = len(self.messages)
            for index, envelope in enumerate(batch, first):
                found = headers.get(id(envelope))
                if found:
                    self.headers[index] = found
        # Comprehensions, not map(attrgetter): the interpreter's specialized slot reads cost half.
        self.keys.extend([envelope.key for envelope in batch])
        self.messages.extend([envelope.message for envelope in batch])
        self.timestamps.extend([envelope.timestamp for envelope in batch])

    def extend_values(self, messages: Sequence[Any]) -> None:
        """Append ``messages``, in order, as messages without key, timestamp or headers."""
        count = len(messages)
        self.keys.extend(itertools.repeat(None, count))
        self.messages.extend(messages)
        self.timestamps.extend(itertools.repeat(None, count))

    def envelopes(
        self, start: int, end: int, offsets: Callable[[int, int], list[str]]
    ) -> list[IncomingMessageEnvelope]:
        """The envelopes of offsets ``start`` to ``end`` (exclusive); ``offsets(a, b)`` gives the
        offset strings of ``a`` to ``b``."""
        sent = self.sent
        kept = len(sent)
        if end <= kept:
            return sent[start:end]
        first = max(start - kept, 0)
        last = end - kept
        envelopes = sent[start:] if start < kept else []
        at = len(envelopes)
        envelopes.extend(
            map(
                IncomingMessageEnvelope,
                itertools.repeat(self.ssp),
                offsets(kept + first, end),
                self.keys[first:last],
                self.messages[first:last],
                self.timestamps[first:last],
            )
        )
        headers = self.headers
        if headers:
            for index in range(first, last):
                found = headers.get(index)
                if found:
                    envelopes[at + index - first].headers = found
        return envelopes

    def values(self) -> list[Any]:
        """Every message value, in offset order."""
        return [envelope.message for envelope in self.sent] + self.messages

    def __len__(self) -> int:
        return len(self.sent) + len(self.messages)


__all__ = ["InMemoryPartition", "plain_batch", "stable_partition"]
