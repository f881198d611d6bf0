"""A recorded round replayed as a round: what the replay's chooser hands out at a ROUND record
(:func:`round_rest`) and the check of what the loop then ran against it (:func:`round_parts`).

A ROUND record (read as one entry: its ``columns``, ``rows`` full rows, then the first ``extra`` columns
once more) replays in *pieces*, each one call of the loop's round (:func:`samza_nb.container.loop.rounds.
run_round`): at a row's start, the whole row held and as many further rows as the record has left (the
loop takes them straight from the buffers); in a row begun, or in the record's last, partial row, the
rest of that row only. A piece the loop cuts short (its budget, a buffer run dry, a task that is not on the
inline path) leaves the rest for the next piece, so the loop never runs past the record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.chooser.base import NO_ROUND
from samza_nb.container.recording.message_digests import matches

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.recording.header import Header
    from samza_nb.container.recording.message_digests import RecordedDigests
    from samza_nb.container.recording.recording import Entry


def round_rest(
    header: Header,
    entry: Entry,
    done: int,
    held: dict[SystemStreamPartition, IncomingMessageEnvelope],
    digests: Sequence[RecordedDigests] | None,
    suspect: set[int],
) -> tuple[Sequence[IncomingMessageEnvelope], int]:
    """The ROUND ``entry``'s message ``done`` was just handed out: the rest of its row that ``held``
    holds, in the recorded order (taken out of ``held``), and how many further full rows the record has
    (0 unless the whole row was handed out from its start). The row stops before a partition that holds
    no message, another offset than the recorded one, a message whose digest is not the recorded one, or
    that buffered such a message (``suspect``: it replays one message at a time)."""
    columns = entry.columns
    width = len(columns)
    row, column = divmod(done, width)
    if columns[column].ssp in suspect:
        return NO_ROUND
    end = width if row < entry.rows else entry.extra  # the last row has the extra columns only
    rest: list[IncomingMessageEnvelope] = []
    for index in range(done + 1, done + end - column):
        partition = columns[index % width].ssp
        envelope = held.get(header.partitions[partition].ssp)
        if (
            envelope is None
            or envelope.is_end_of_stream
            or partition in suspect
            or entry.offset_at(index) not in ("", envelope.offset)
        ):
            break
        if digests is not None:
            recorded = digests[partition].get(envelope.offset)
            if recorded is not None and not matches(envelope, recorded):
                break
        rest.append(envelope)
    for envelope in rest:
        del held[envelope.ssp]
    whole = column == 0 and len(rest) == width - 1
    return rest, entry.rows - row - 1 if whole and row < entry.rows else 0


def round_parts(
    entry: Entry, done: int, ssps: Sequence[int], ends: Sequence[tuple[str, str]], rows: int, extra: int
) -> tuple[int, int, str] | None:
    """Where a piece of a round that ran (partitions ``ssps`` in turn: ``rows`` full rows, then the first
    ``extra`` once more; ``ends``: each one's first and last offset) parts from the ROUND ``entry`` whose
    first ``done`` messages started: None when the piece is the record's next messages, else how many
    messages into the piece they part, the partition's index there and the offset it started ("": one
    past the record's)."""
    columns = entry.columns
    width = len(columns)
    column = done % width
    count = rows * len(ssps) + extra
    narrow = column or len(ssps) != width  # a piece narrower than the record's rows stays in one row
    if narrow and (rows > 1 or (rows == 1 and extra)):
        return len(ssps), ssps[0], ""
    for j, ssp in enumerate(ssps):
        taken = rows + 1 if j < extra else rows  # the partition's messages in the piece
        if not taken:
            break
        if column + j >= width or columns[column + j].ssp != ssp:
            return j, ssp, ends[j][0]
        last = j + (taken - 1) * width
        if done + last >= entry.value:
            return last, ssp, ""
        if entry.offset_at(done + j) not in ("", ends[j][0]):
            return j, ssp, ends[j][0]
        if entry.offset_at(done + last) not in ("", ends[j][1]):
            return last, ssp, ends[j][1]
    if done + count > entry.value:
        return entry.value - done, ssps[(entry.value - done) % len(ssps)], ""
    return None


__all__ = ["round_parts", "round_rest"]
