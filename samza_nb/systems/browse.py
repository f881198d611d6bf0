"""Reading a stream's messages for people (``%samza_browse``, ``samza-nb browse``), through the stream's own
system: its admin says which partitions and offsets exist, its consumer reads them, decoded with the serdes
the job configured for the stream (as the job's containers read them).

Any system a job names works the same way (Kafka, the embedded durable log, the in-memory system, a file),
since every one has an admin and a consumer (:mod:`samza_nb.systems.base`); nothing here opens a client of
its own. A read is bounded: it starts at ``start`` (default each partition's oldest message), reads at most
``limit`` messages of each partition (with ``key``, that many whose key matches), and ends at the partition's
newest message when it began: a browse never waits for messages yet to come. A stream, partition or offset
that does not exist is a :class:`BrowseError` naming it, in one line.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.errors import SamzaError
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin, SystemConsumer

DEFAULT_LIMIT = 20
"""Messages of each partition a browse shows when not told (``-n``)."""

IDLE_S = 10.0
"""How long a browse waits for a message its partition's metadata says exists before it says so."""

POLL_S = 0.2


class BrowseError(SamzaError):
    """A stream, partition or offset to browse does not exist (or the system cannot be read): one line
    naming it."""


@dataclass(frozen=True, slots=True)
class BrowsedMessage:
    """One message as its stream holds it: ``key`` and ``value`` decoded with the stream's serdes,
    ``headers`` as ``(name, bytes)`` pairs, ``timestamp`` in ms (None when the system keeps none)."""

    partition: int
    offset: str
    key: Any
    value: Any
    headers: tuple[tuple[str, bytes | None], ...] = ()
    timestamp: int | None = None


@dataclass(frozen=True)
class Browse:
    """What a browse found: the ``messages`` (by partition, then offset) and ``notes``, one line for each
    partition that had nothing to show or was cut short (an empty partition, a key found nowhere);
    ``partitions`` the stream's partitions (their offsets when the browse began), ``read`` those read."""

    stream: SystemStream
    messages: tuple[BrowsedMessage, ...]
    notes: tuple[str, ...] = ()
    partitions: dict[int, SSPMetadata] = field(default_factory=dict)
    read: tuple[int, ...] = ()


def parse_stream(text: str) -> SystemStream:
    """``system.stream`` as a SystemStream (the stream's name may hold dots: the first dot separates); a
    BrowseError naming ``text`` otherwise."""
    system, dot, stream = text.strip().partition(".")
    if not dot or not system or not stream:
        raise BrowseError(f"{text!r} is not system.stream (e.g. kafka.orders, log.words)")
    return SystemStream(system, stream)


def key_text(key: Any) -> str:
    """A decoded key as the text ``--key`` is matched against: text as it is, UTF-8 bytes decoded, other
    values as ``str``."""
    if isinstance(key, bytes | bytearray):
        return bytes(key).decode("utf-8", errors="replace")
    return str(key)


HEADERS = ("partition", "offset", "key", "value", "headers", "timestamp")
"""The columns of a browse, as people see it (:func:`message_row`)."""

WIDTH = 80
"""The longest key, value or header a cell shows (longer ones end with ``…``)."""


def readable(value: Any, none: str = "—") -> str:
    """``value`` for a person, on one line: text as it is, bytes as UTF-8 text when they are (else ``0x`` +
    hex), None as ``none``, anything else as its ``repr``; cut to :data:`WIDTH` characters."""
    if value is None:
        return none
    if isinstance(value, bytes | bytearray):
        try:
            text = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            text = "0x" + bytes(value).hex()
    else:
        text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split()) if text.isprintable() else repr(text)
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def message_row(message: BrowsedMessage) -> tuple[str, ...]:
    """The cells of one message (:data:`HEADERS`): the timestamp as UTC ISO time with milliseconds."""
    headers = " ".join(f"{readable(name)}={readable(value, 'null')}" for name, value in message.headers)
    stamp = "—"
    if message.timestamp is not None:
        moment = datetime.fromtimestamp(message.timestamp / 1000, UTC).replace(tzinfo=None)
        stamp = moment.isoformat(timespec="milliseconds") + "Z"
    return (
        str(message.partition),
        message.offset,
        readable(message.key),
        readable(message.value, "null"),
        headers or "—",
        stamp,
    )


async def browse(
    config: Config,
    stream: SystemStream,
    *,
    partition: int | None = None,
    start: str | None = None,
    key: str | None = None,
    limit: int = DEFAULT_LIMIT,
    idle_s: float = IDLE_S,
) -> Browse:
    """The messages of ``stream`` (every partition, or ``partition``) from offset ``start`` (default: each
    partition's oldest), at most ``limit`` per partition, only those whose key is ``key`` (as
    :func:`key_text` shows it) when given; read with the admin and consumer of the stream's system in
    ``config``. A BrowseError names the system, stream, partition or offset that does not exist."""
    if limit < 1:
        raise BrowseError(f"-n {limit}: show at least 1 message")
    try:
        factory = system_factory(config, stream.system)
    except SamzaError as exc:
        raise BrowseError(f"{stream}: system {stream.system!r} is not one of the job's: {exc}") from None
    admin = factory.get_admin(stream.system, config)
    metadata = await _metadata(admin, stream)
    if partition is not None and partition not in metadata:
        raise BrowseError(
            f"{stream}: --partition {partition}: the stream has partitions 0..{len(metadata) - 1}"
        )
    numbers = sorted(metadata) if partition is None else [partition]
    notes: list[str] = []
    starts: dict[SystemStreamPartition, tuple[str, str]] = {}
    for number in numbers:
        ssp = SystemStreamPartition(stream.system, stream.stream, number)
        span = _span(admin, ssp, metadata[number], start)
        if isinstance(span, str):
            notes.append(span)
        else:
            starts[ssp] = span
    messages: list[BrowsedMessage] = []
    if starts:
        consumer = factory.get_consumer(stream.system, config)
        try:
            messages = await _read(consumer, admin, starts, key, limit, idle_s, notes)
        except SamzaError as exc:
            raise BrowseError(f"{stream}: {exc}") from None
    if key is not None and not messages:
        notes.append(f"no message with key {key!r} in the offsets read")
    messages.sort(key=lambda m: m.partition)  # stable: offset order within each partition
    return Browse(stream, tuple(messages), tuple(notes), metadata, tuple(numbers))


async def _metadata(admin: SystemAdmin, stream: SystemStream) -> dict[int, SSPMetadata]:
    try:
        found = await admin.get_metadata([stream.stream])
    except SamzaError as exc:
        raise BrowseError(f"{stream}: {exc}") from None
    partitions = found.get(stream.stream)
    if not partitions:
        raise BrowseError(f"{stream}: system {stream.system!r} has no stream {stream.stream!r}")
    return partitions


def _span(
    admin: SystemAdmin, ssp: SystemStreamPartition, meta: SSPMetadata, start: str | None
) -> tuple[str, str] | str:
    """Where to read ``ssp``: (first offset, newest offset), or a note saying why there is nothing."""
    where = f"partition {ssp.partition}"
    if start is not None:
        try:
            admin.offset_after(start)  # a SamzaError when ``start`` is no offset of this system
        except SamzaError as exc:
            raise BrowseError(f"{ssp.system_stream}: --from {start}: {exc}") from None
    if meta.oldest is None or meta.newest is None:
        return f"{where} is empty (the next offset is {meta.upcoming})"
    first = meta.oldest if start is None else start
    try:
        before = admin.offset_comparator(first, meta.oldest) < 0
        after = admin.offset_comparator(first, meta.newest) > 0
    except ValueError:
        raise BrowseError(f"{ssp.system_stream}: --from {start}: not an offset of {ssp}") from None
    span = f"{ssp} has offsets {meta.oldest}..{meta.newest}"
    if before:
        raise BrowseError(
            f"{ssp.system_stream}: --from {start}: {span} (offset {start} is gone or never was)"
        )
    if after:
        if meta.upcoming is not None and admin.offset_comparator(first, meta.upcoming) == 0:
            return f"{where}: no message at offset {start} yet ({span})"
        raise BrowseError(f"{ssp.system_stream}: --from {start}: {span}")
    return first, meta.newest


async def _read(
    consumer: SystemConsumer,
    admin: SystemAdmin,
    spans: dict[SystemStreamPartition, tuple[str, str]],
    key: str | None,
    limit: int,
    idle_s: float,
    notes: list[str],
) -> list[BrowsedMessage]:
    """Read each partition of ``spans`` from its first offset up to its newest (or ``limit`` matches)."""
    for ssp, (first, _newest) in spans.items():
        consumer.register(ssp, first)
    await consumer.start()
    found: dict[SystemStreamPartition, list[BrowsedMessage]] = {ssp: [] for ssp in spans}
    last: dict[SystemStreamPartition, str] = {}
    open_ = set(spans)
    try:
        quiet_since = time.monotonic()
        while open_:
            batches = await consumer.poll(sorted(open_), POLL_S)
            if not batches:
                if time.monotonic() - quiet_since > idle_s:
                    for ssp in sorted(open_):
                        after = f"after offset {last[ssp]}" if ssp in last else f"from offset {spans[ssp][0]}"
                        notes.append(f"partition {ssp.partition}: nothing came {after} within {idle_s:g} s")
                    break
                continue
            quiet_since = time.monotonic()
            for ssp, envelopes in batches.items():
                if ssp in open_ and _take(ssp, envelopes, admin, spans[ssp][1], key, limit, found[ssp], last):
                    open_.discard(ssp)
    finally:
        await consumer.stop()
    for ssp, messages in found.items():
        offset = last.get(ssp)
        if (
            len(messages) >= limit
            and offset is not None
            and admin.offset_comparator(offset, spans[ssp][1]) < 0
        ):
            notes.append(
                f"partition {ssp.partition}: more from offset {admin.offset_after(offset)} (-n {limit} shown)"
            )
    return [message for ssp in sorted(found) for message in found[ssp]]


def _take(
    ssp: SystemStreamPartition,
    envelopes: Sequence[Any],
    admin: SystemAdmin,
    newest: str,
    key: str | None,
    limit: int,
    into: list[BrowsedMessage],
    last: dict[SystemStreamPartition, str],
) -> bool:
    """Add the envelopes of ``ssp`` that match ``key`` to ``into``; True once the partition is done (its
    newest offset reached, its end-of-stream, or ``limit`` messages)."""
    for envelope in envelopes:
        if envelope.is_end_of_stream:
            return True
        last[ssp] = envelope.offset
        if key is None or (envelope.key is not None and key_text(envelope.key) == key):
            into.append(
                BrowsedMessage(
                    ssp.partition,
                    envelope.offset,
                    envelope.key,
                    envelope.message,
                    tuple(envelope.headers),
                    envelope.timestamp,
                )
            )
            if len(into) >= limit:
                return True
        if admin.offset_comparator(envelope.offset, newest) >= 0:
            return True
    return False


def add_browse_arguments(parser: Any) -> None:
    """Add a browse's arguments (``SYSTEM.STREAM``, ``--partition``, ``--from``, ``--key``, ``-n``) to an
    argparse-like ``parser``: the magic's and the CLI command's are the same."""
    parser.add_argument("stream", metavar="SYSTEM.STREAM", help="the stream to show (e.g. kafka.orders)")
    parser.add_argument("--partition", type=int, metavar="P", help="only partition P (default: every one)")
    parser.add_argument(
        "--from", dest="start", metavar="OFFSET", help="the first offset shown (default: the oldest)"
    )
    parser.add_argument("--key", metavar="K", help="only the messages whose key is K")
    parser.add_argument(
        "-n",
        dest="limit",
        type=int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"at most N messages of each partition (default {DEFAULT_LIMIT})",
    )


__all__ = [
    "DEFAULT_LIMIT",
    "HEADERS",
    "Browse",
    "BrowseError",
    "BrowsedMessage",
    "add_browse_arguments",
    "browse",
    "key_text",
    "message_row",
    "parse_stream",
    "readable",
]
