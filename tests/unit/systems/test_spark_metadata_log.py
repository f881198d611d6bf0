"""The ``_spark_metadata`` log of a Spark output directory (samza_nb.systems.spark.outputs.spark_log):
Spark's file format, create-if-absent batch ids under concurrent writers in separate processes, compaction
that lists every earlier entry exactly once, and retention that keeps the log small. Reading it with real
Spark is tests/integration/spark/test_spark_metadata_read.py."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

from samza_nb.systems.spark.outputs.spark_log import (
    METADATA_DIR,
    SparkMetadataLog,
    committed_paths,
    entry_for,
)

WRITERS = 2
BATCHES = 45


def _file(directory: Path, name: str) -> Path:
    path = directory / name
    path.write_bytes(b"PAR1" + name.encode())
    return path


def test_a_batch_is_v1_then_one_sink_file_status_per_line(tmp_path: Path) -> None:
    log = SparkMetadataLog(tmp_path)
    files = [_file(tmp_path, "a b.parquet"), _file(tmp_path, "c.parquet")]
    assert log.append([entry_for(path) for path in files]) == 0
    lines = (tmp_path / METADATA_DIR / "0").read_text().split("\n")
    assert lines[0] == "v1"
    first = json.loads(lines[1])
    assert list(first) == [
        "path", "size", "isDir", "modificationTime", "blockReplication", "blockSize", "action"
    ]  # fmt: skip
    assert first["path"] == "file:" + str(tmp_path / "a%20b.parquet").replace(" ", "%20")
    assert first["size"] == len(b"PAR1a b.parquet") and first["isDir"] is False and first["action"] == "add"
    assert committed_paths(tmp_path) == [str(tmp_path / "a b.parquet"), str(tmp_path / "c.parquet")]


def test_every_tenth_batch_is_a_compact_file_of_the_live_set_and_old_batches_go(tmp_path: Path) -> None:
    log = SparkMetadataLog(tmp_path)
    names = [f"f{n:03d}.parquet" for n in range(35)]
    for name in names:
        log.append([entry_for(_file(tmp_path, name))])
    present = sorted((tmp_path / METADATA_DIR).iterdir(), key=lambda p: int(p.name.split(".")[0]))
    # retention as Spark's: from the compact file before the newest on
    expected = ["19.compact", *map(str, range(20, 29)), "29.compact", *map(str, range(30, 35))]
    assert [p.name for p in present] == expected
    compact = (tmp_path / METADATA_DIR / "29.compact").read_text().split("\n")
    assert compact[0] == "v1" and len(compact) == 1 + 30
    assert [Path(p).name for p in committed_paths(tmp_path)] == names


def _writer(directory: str, writer: int, start: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    start.wait()
    log = SparkMetadataLog(Path(directory))
    for n in range(BATCHES):
        path = Path(directory) / f"w{writer}-{n:03d}.parquet"
        path.write_bytes(b"x")
        log.append([entry_for(path)])


def test_two_processes_appending_to_one_log_lose_and_double_nothing(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [context.Process(target=_writer, args=(str(tmp_path), w, start)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    start.set()
    for process in writers:
        process.join(timeout=120)
        assert process.exitcode == 0
    live = [Path(p).name for p in committed_paths(tmp_path)]
    expected = {f"w{w}-{n:03d}.parquet" for w in range(WRITERS) for n in range(BATCHES)}
    assert sorted(live) == sorted(expected)  # every entry exactly once, through the compactions
    for w in range(WRITERS):  # each writer's batches in its own order
        mine = [name for name in live if name.startswith(f"w{w}-")]
        assert mine == sorted(mine)
    log = SparkMetadataLog(tmp_path)
    batches = log.batches()
    assert batches == list(range(batches[0], WRITERS * BATCHES))  # consecutive ids, none overwritten
    assert len(batches) <= 2 * log.interval
    assert not [p for p in (tmp_path / METADATA_DIR).iterdir() if p.name.startswith(".")]  # no temporaries
