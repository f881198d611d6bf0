"""Integer offsets ("0", "1", …), shared by the systems whose offsets are positions in a log."""

from __future__ import annotations

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.errors import SystemConsumersError


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
    """The offset after ``offset`` (one more); the errors of :func:`parse_integer_offset` otherwise."""
    return str(parse_integer_offset(what, offset, kind) + 1)
