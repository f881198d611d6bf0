"""Integer offsets ("0", "1", …), shared by the systems whose offsets are positions in a log."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from samza_nb.api.metadata import OffsetReset
from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.config.key_spec import parse_choice
from samza_nb.errors import SystemConsumersError

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config

log = logging.getLogger(__name__)

_RESET_CHOICES = ("oldest", "upcoming", "newest")


def compare_integer_offsets(a: str, b: str) -> int:
    """Integer order ("2" < "10"); end-of-stream sorts after every offset."""
    if a == END_OF_STREAM_OFFSET or b == END_OF_STREAM_OFFSET:
        return (a == END_OF_STREAM_OFFSET) - (b == END_OF_STREAM_OFFSET)
    x, y = int(a), int(b)
    return (x > y) - (x < y)


def parse_integer_offset(what: object, offset: str, kind: str) -> int:
    """``offset`` as a position >= 0; a SystemConsumersError naming ``what`` (an SSP, a system) and
    ``kind`` (e.g. "a file offset (expected a line number 0, 1, ...)") otherwise."""
    try:
        value = int(offset)
    except (TypeError, ValueError):
        raise SystemConsumersError(f"{what}: {offset!r} is not {kind}") from None
    if value < 0:
        raise SystemConsumersError(f"{what}: offset {offset!r} is negative")
    return value


def integer_offset_after(what: object, offset: str, kind: str) -> str:
    """The offset after ``offset`` (one more; "0" after "-1", the offset before the first that a checkpoint
    written after a reset to offset 0 holds); the errors of :func:`parse_integer_offset` otherwise."""
    if offset == BEFORE_FIRST:
        return "0"
    return str(parse_integer_offset(what, offset, kind) + 1)


BEFORE_FIRST = "-1"
"""The integer offset before offset 0: a partition reset to its first message counts it as processed."""


def integer_reset(
    ssp: SystemStreamPartition, position: int, to: int, reason: str, policy: str
) -> OffsetReset:
    """The report of a consumer of integer offsets that moved ``ssp`` from ``position`` to ``to``."""
    return OffsetReset(ssp, str(position), str(to), str(to - 1), reason, policy)


def reset_past_end(
    config: Config, ssp: SystemStreamPartition, position: int, end: int, what: str
) -> OffsetReset:
    """``ssp`` was to be read from ``position``, past the end of ``what`` ("the log", "the file") whose next
    offset is ``end`` (it was recreated or truncated shorter than the job's checkpoint): the reset that
    ``systems.<s>.streams.<t>.samza.offset.default`` (else ``systems.<s>.samza.offset.default``) asks for
    when set (oldest: offset 0; upcoming: ``end``; newest: the last message; logged as a warning), else a
    SystemConsumersError naming the partition, the offset, the end and the keys (never a silent skip)."""
    stream_key = f"systems.{ssp.system}.streams.{ssp.stream}.samza.offset.default"
    system_key = f"systems.{ssp.system}.samza.offset.default"
    reason = f"is past the end of {what} (next offset {end}: {what} is shorter than the checkpoint)"
    key = stream_key if stream_key in config else system_key if system_key in config else None
    if key is None:
        raise SystemConsumersError(
            f"{ssp}: offset {position} (after the job's checkpoint) is past the end of {what}, whose next "
            f"offset is {end} (recreated or truncated?); set {system_key} (or {stream_key}) to oldest to "
            "read it from the start or to upcoming to read only new messages, or reset the job's checkpoints"
        )
    choice = parse_choice(key, config[key], _RESET_CHOICES)
    to = 0 if choice == "oldest" else end if choice == "upcoming" else max(end - 1, 0)
    reset = integer_reset(ssp, position, to, reason, f"{key}={choice}")
    log.warning("%s", reset.describe())
    return reset
