"""What a crash leaves: a torn tail is dropped with a warning; damage anywhere else is an error naming the
file, the byte and the offset, never a silent skip."""

from __future__ import annotations

import logging
import struct
from pathlib import Path
from typing import Any

import pytest

from samza_nb.errors import SamzaError
from samza_nb.systems.log import DurableLog
from samza_nb.systems.log.format import HEADER_SIZE
from samza_nb.systems.log.format import encode_batch as encode_parts

pytestmark = pytest.mark.faults


def encode_batch(*args: Any, **kwargs: Any) -> bytes:
    return b"".join(encode_parts(*args, **kwargs))


def filled(tmp_path: Path, batches: int = 3) -> Path:
    """A one-partition stream "s" with ``batches`` flushed batches of 10 records; its partition file."""
    with DurableLog(tmp_path) as log:
        log.create_stream("s", 1)
        for b in range(batches):
            log.send_batch("s", [(None, f"b{b}-{i}".encode(), 0) for i in range(10)])
        log.flush()
    return tmp_path / "s" / "0.log"


def values(tmp_path: Path) -> list[bytes]:
    with DurableLog(tmp_path) as log:
        return [v for _, _, v in log.read("s", 0)]


def append_raw(path: Path, data: bytes) -> None:
    with path.open("ab") as file:
        file.write(data)


def flip(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0x01
    path.write_bytes(bytes(data))


def batch_positions(path: Path) -> list[int]:
    data, pos, positions = path.read_bytes(), 0, []
    while pos < len(data):
        positions.append(pos)
        (length,) = struct.unpack_from("<I", data, pos + 28)
        pos += HEADER_SIZE + length
    return positions


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(lambda: encode_batch(30, 0, [b"lost"] * 5)[:-7], id="a batch cut short"),
        pytest.param(lambda: encode_batch(30, 0, [b"lost"] * 5)[: HEADER_SIZE - 3], id="half a header"),
        pytest.param(lambda: bytes(4096), id="zeros"),
        pytest.param(
            lambda: encode_batch(30, 0, [b"lost"] * 5)[:-1] + b"?", id="a last batch whose CRC fails"
        ),
    ],
)
def test_a_torn_tail_is_dropped_with_a_warning_and_appends_continue(
    tmp_path: Path, tail: object, caplog: pytest.LogCaptureFixture
) -> None:
    path = filled(tmp_path)
    good = path.stat().st_size
    torn = tail()  # type: ignore[operator]
    append_raw(path, torn)
    with caplog.at_level(logging.WARNING), DurableLog(tmp_path) as log:
        assert log.send("s", b"after") == (0, 30)
        log.flush()
        assert path.stat().st_size > good
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert f"dropped a torn tail of {len(torn)} bytes at byte {good} (offset 30) of {path}" in warning
    assert values(tmp_path) == [f"b{b}-{i}".encode() for b in range(3) for i in range(10)] + [b"after"]


def test_damage_before_the_tail_found_on_open_names_file_byte_and_offset(tmp_path: Path) -> None:
    path = filled(tmp_path, batches=1)
    mark = path.with_suffix(".flushed")
    mark.unlink()  # as after an OS crash that lost the mark: every batch is checked on open
    positions = batch_positions(path)
    append_raw(path, encode_batch(10, 0, [b"x"] * 3) + encode_batch(13, 0, [b"y"] * 3))
    second = batch_positions(path)[1]
    flip(path, second + HEADER_SIZE + 2)  # inside the body of the batch of offsets 10-12, not the last
    with pytest.raises(SamzaError) as info, DurableLog(tmp_path) as log:
        log.upcoming("s", 0)
    message = str(info.value)
    assert str(path) in message and f"byte {second}," in message and "offset 10" in message
    assert "CRC mismatch" in message and positions == [0]
    assert path.stat().st_size > second  # nothing was truncated
    with DurableLog(tmp_path) as log:
        for _ in range(2):  # every use fails the same way; none appends after the damage
            with pytest.raises(SamzaError, match=f"byte {second}, offset 10"):
                log.send("s", b"more")
    assert path.stat().st_size == batch_positions(path)[-1] + len(encode_batch(13, 0, [b"y"] * 3))


def test_damage_in_flushed_batches_is_found_when_they_are_read(tmp_path: Path) -> None:
    path = filled(tmp_path)
    middle = batch_positions(path)[1]
    flip(path, middle + HEADER_SIZE + 50)
    with DurableLog(tmp_path) as log:
        records = log.read("s", 0)
        assert [next(records)[0] for _ in range(10)] == list(range(10))  # the first batch is fine
        with pytest.raises(SamzaError) as info:
            next(records)
        message = str(info.value)
        assert str(path) in message and f"byte {middle}," in message and "offset 10" in message
        with pytest.raises(SamzaError, match="offset 10"):  # reading from after it does not skip it
            list(log.read("s", 0, "15"))
        assert [o for o, _, _ in log.read("s", 0, "20")] == list(range(20, 30))


def test_a_damaged_header_in_flushed_batches_is_an_error(tmp_path: Path) -> None:
    path = filled(tmp_path)
    middle = batch_positions(path)[1]
    flip(path, middle)  # the magic
    with DurableLog(tmp_path) as log, pytest.raises(SamzaError) as info:
        list(log.read("s", 0, "25"))
    assert f"byte {middle}," in str(info.value) and "no batch starts here" in str(info.value)


def test_a_file_shorter_than_its_flush_mark_is_an_error(tmp_path: Path) -> None:
    path = filled(tmp_path)
    with path.open("r+b") as file:
        file.truncate(100)
    with (
        pytest.raises(SamzaError, match=r"is 100 bytes, but its flush mark says \d+ bytes"),
        DurableLog(tmp_path) as log,
    ):
        log.upcoming("s", 0)


def test_a_lost_flush_mark_hides_nothing(tmp_path: Path) -> None:
    path = filled(tmp_path)
    path.with_suffix(".flushed").write_bytes(b"")
    assert len(values(tmp_path)) == 30


def test_a_torn_tail_left_while_a_handle_is_open_is_dropped_by_that_handle_too(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A writer of another process killed mid-append leaves a torn tail behind a live handle: its next
    append drops the tail (appends write under the lock, so a partial batch is a dead writer's)."""
    path = filled(tmp_path)
    with DurableLog(tmp_path) as live:
        assert live.send("s", b"before") == (0, 30)
        live.flush()
        good = path.stat().st_size
        append_raw(path, encode_batch(31, 0, [b"lost"] * 5)[:-7])
        with caplog.at_level(logging.WARNING):
            assert live.send("s", b"after") == (0, 31)
            live.flush()
    assert f"at byte {good}" in " ".join(r.getMessage() for r in caplog.records)
    assert values(tmp_path)[-2:] == [b"before", b"after"]


def test_first_uses_of_a_handle_from_several_threads_open_the_partition_once(tmp_path: Path) -> None:
    """Threads racing on a fresh handle's first use (one reading the flush mark, others appending, while
    recovery has a long unflushed tail to walk) neither deadlock nor hand out one offset twice."""
    import threading

    filled(tmp_path)
    with DurableLog(tmp_path) as writer:  # 20k records appended, never flushed: recovery's work
        writer.send_batch("s", [(None, b"u" * 100, 0)] * 20_000)
    for _ in range(5):
        with DurableLog(tmp_path) as log:
            barrier = threading.Barrier(3)
            sent: list[tuple[int, int]] = []

            def first_use(send: bool, log: DurableLog, barrier: threading.Barrier, sent: list[Any]) -> None:
                barrier.wait()
                if send:
                    sent.append(log.send("s", b"x", partition=0))
                else:
                    log.upcoming("s", 0)

            threads = [
                threading.Thread(target=first_use, args=(send, log, barrier, sent), daemon=True)
                for send in (False, True, True)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=30)
            assert not any(thread.is_alive() for thread in threads), "deadlocked"
            log.flush()
            assert len({offset for _, offset in sent}) == 2
        with DurableLog(tmp_path) as log:
            offsets = [offset for offset, _, _ in log.read("s", 0)]
        assert offsets == list(range(len(offsets)))
