"""DurableLog: streams, partitioning, offsets, flush visibility."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.errors import SamzaError
from samza_nb.systems.log import DurableLog
from samza_nb.systems.partitioner import key_partition


@pytest.fixture
def log(tmp_path: Path) -> DurableLog:
    handle = DurableLog(tmp_path / "log")
    yield handle  # type: ignore[misc]
    handle.close()


def test_create_stream_is_idempotent_and_refuses_another_count(log: DurableLog, tmp_path: Path) -> None:
    log.create_stream("s", 3)
    log.create_stream("s", 3)
    assert log.partitions("s") == 3
    with pytest.raises(SamzaError, match=r"stream 's' in .* exists with 3 partitions, not 4"):
        log.create_stream("s", 4)
    with DurableLog(tmp_path / "log") as other:  # another handle (or process) sees the same count
        other.create_stream("s", 3)
        with pytest.raises(SamzaError, match="not 1"):
            other.create_stream("s", 1)
    assert log.streams() == ["s"]


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a b", "x" * 250])
def test_illegal_stream_names_are_refused(log: DurableLog, name: str) -> None:
    with pytest.raises(SamzaError, match="cannot name a durable log stream"):
        log.create_stream(name, 1)


@pytest.mark.parametrize("partitions", [0, -1, True, 1.5])
def test_partition_counts_must_be_positive_integers(log: DurableLog, partitions: object) -> None:
    with pytest.raises(SamzaError, match="partitions must be an integer >= 1"):
        log.create_stream("s", partitions)  # type: ignore[arg-type]


def test_unknown_streams_and_partitions_are_named(log: DurableLog) -> None:
    log.create_stream("known", 2)
    with pytest.raises(SamzaError, match=r"has no stream 'nope' \(streams: known\)"):
        log.send("nope", b"x")
    with pytest.raises(SamzaError, match=r"partitions 0..1; partition 2 does not exist"):
        log.send("known", b"x", partition=2)
    with pytest.raises(SamzaError, match=r"partition 5 does not exist"):
        log.send_batch("known", [(None, b"x", 5)])


def test_keys_are_partitioned_with_kafkas_murmur2(log: DurableLog) -> None:
    log.create_stream("s", 5)
    keys = [f"user-{i}".encode() for i in range(50)]
    for key in keys:
        partition, _ = log.send("s", b"v", key=key)
        assert partition == key_partition(key, 5)
    log.send_batch("s", [(key, b"w", None) for key in keys])
    log.flush()
    for partition in range(5):
        mine = [key for key in keys if key_partition(key, 5) == partition]
        assert [k for _, k, _ in log.read("s", partition)] == mine + mine
    assert log.send("s", b"v", key="user-1")[0] == key_partition(b"user-1", 5)  # str keys as UTF-8


def test_messages_without_a_key_go_round_robin(log: DurableLog) -> None:
    log.create_stream("s", 3)
    assert [log.send("s", f"m{i}")[0] for i in range(4)] == [0, 1, 2, 0]
    log.send_batch("s", [(None, f"b{i}", None) for i in range(5)])  # continues the rotation: 1, 2, 0, ...
    log.flush()
    assert [v for _, _, v in log.read("s", 0)] == [b"m0", b"m3", b"b2"]
    assert [v for _, _, v in log.read("s", 1)] == [b"m1", b"b0", b"b3"]
    assert [v for _, _, v in log.read("s", 2)] == [b"m2", b"b1", b"b4"]


def test_offsets_are_dense_and_reads_start_anywhere(log: DurableLog) -> None:
    log.create_stream("s", 1)
    offsets = [log.send("s", f"m{i}")[1] for i in range(5)]
    log.send_batch("s", [(None, f"m{i}", 0) for i in range(5, 40_000)])  # several batches
    log.send("s", "m40000")
    log.flush()
    assert offsets == [0, 1, 2, 3, 4]
    records = list(log.read("s", 0))
    assert [o for o, _, _ in records] == list(range(40_001))
    assert [v for _, _, v in records] == [f"m{i}".encode() for i in range(40_001)]
    for start in ("0", "3", "5", "16388", "39999", "40000"):
        assert next(iter(log.read("s", 0, start)))[0] == int(start)
    assert list(log.read("s", 0, 40_001)) == []
    assert log.upcoming("s", 0) == 40_001
    with pytest.raises(SamzaError, match="not a durable log offset"):
        list(log.read("s", 0, "x"))


def test_tombstones_and_missing_keys_are_kept(log: DurableLog) -> None:
    log.create_stream("s", 1)
    log.send("s", None, key=b"k")
    log.send("s", b"v")
    log.send_batch("s", [(b"a", None, 0), (None, b"b", 0)])
    log.flush()
    assert list(log.read("s", 0)) == [(0, b"k", None), (1, None, b"v"), (2, b"a", None), (3, None, b"b")]


def test_readers_see_only_flushed_records(log: DurableLog, tmp_path: Path) -> None:
    log.create_stream("s", 1)
    with DurableLog(tmp_path / "log") as reader:
        assert list(reader.read("s", 0)) == []
        log.send("s", b"one")
        assert list(reader.read("s", 0)) == []
        assert reader.upcoming("s", 0) == 0
        log.flush()
        assert list(reader.read("s", 0)) == [(0, None, b"one")]
        log.send_batch("s", [(None, b"two", None)])
        assert reader.upcoming("s", 0) == 1
        log.flush()
        assert [v for _, _, v in reader.read("s", 0, 1)] == [b"two"]


def test_two_handles_append_to_one_partition(log: DurableLog, tmp_path: Path) -> None:
    log.create_stream("s", 1)
    with DurableLog(tmp_path / "log") as other:
        assert log.send("s", b"a") == (0, 0)
        assert other.send("s", b"b") == (0, 1)
        assert log.send("s", b"c") == (0, 2)
        other.flush()  # makes the whole file durable, so every record is visible
        assert [v for _, _, v in log.read("s", 0)] == [b"a", b"b", b"c"]


def test_a_closed_log_refuses_use(tmp_path: Path) -> None:
    handle = DurableLog(tmp_path)
    handle.create_stream("s", 1)
    handle.send("s", b"x")
    handle.close()
    handle.close()
    with pytest.raises(SamzaError, match="is closed"):
        handle.send("s", b"y")
    with DurableLog(tmp_path) as again:  # close flushed
        assert list(again.read("s", 0)) == [(0, None, b"x")]


def test_event_timestamps_are_stored_per_record(log: DurableLog) -> None:
    log.create_stream("s", 2)
    log.send("s", b"one", partition=0, timestamp=42)
    log.send("s", b"two", partition=0)
    log.send_batch("s", [(None, b"a", 1), (b"k", b"b", 1), (None, b"c", 1)], [7, None, 9])
    log.flush()
    stamped = [None if b.timestamps is None else list(b.timestamps) for b in log.batches("s", 0)]
    assert stamped == [[42], None]
    (batch,) = log.batches("s", 1)
    assert list(batch.timestamps or ()) == [7, None, 9]
    with pytest.raises(ValueError, match="2 timestamps for 3 records"):
        log.send_batch("s", [(None, b"a", 0)] * 3, [1, 2])
