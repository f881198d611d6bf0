"""The file system: line offsets, end-of-stream, poll batching, producer buffering and flush, errors."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, ConfigError, OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import END_OF_STREAM_OFFSET, SystemStreamPartition
from samza_nb.errors import SystemConsumersError, SystemProducerError
from samza_nb.systems.base import SystemAdmin, SystemConsumer, SystemFactory, SystemProducer
from samza_nb.systems.file.system import POLL_BATCH, FileSystemFactory, count_lines
from samza_nb.systems.registry import system_factory

SYSTEM = "files"
SSP = SystemStreamPartition(SYSTEM, "in", 0)


def config(tmp_path: Path, **streams: str) -> Config:
    values = {
        f"systems.{SYSTEM}.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        f"systems.{SYSTEM}.output.dir": str(tmp_path / "out"),
    }
    for stream, path in streams.items():
        values[f"systems.{SYSTEM}.streams.{stream}.path"] = path
    return Config(values)


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def read_all(cfg: Config, offset: str = "0", batch_size: int = POLL_BATCH) -> list[list[Any]]:
    """Every poll's (offset, message) pairs until end-of-stream."""

    async def go() -> list[list[Any]]:
        consumer = FileSystemFactory().get_consumer(SYSTEM, cfg)
        consumer._batch_size = batch_size
        consumer.register(SSP, offset)
        await consumer.start()
        polls: list[list[Any]] = []
        try:
            while True:
                batch = (await consumer.poll([SSP], 0.0)).get(SSP, [])
                polls.append([(e.offset, e.message) for e in batch])
                assert all(e.key is None and e.ssp is SSP for e in batch)
                if batch and batch[-1].is_end_of_stream:
                    break
                assert len(polls) < 100
            assert await consumer.poll([SSP], 0.01) == {}  # nothing after end-of-stream
        finally:
            await consumer.stop()
        return polls

    return asyncio.run(go())


def test_factory_parts_implement_the_protocols(tmp_path: Path) -> None:
    cfg = config(tmp_path, **{"in": str(tmp_path / "in.txt")})
    factory = system_factory(cfg, SYSTEM)
    assert isinstance(factory, FileSystemFactory)
    assert isinstance(factory, SystemFactory)
    assert isinstance(factory.get_admin(SYSTEM, cfg), SystemAdmin)
    assert isinstance(factory.get_consumer(SYSTEM, cfg), SystemConsumer)
    assert isinstance(factory.get_producer(SYSTEM, cfg), SystemProducer)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", SSPMetadata(None, None, "0")),
        ("one\n", SSPMetadata("0", "0", "1")),
        ("a\nb\nc\n", SSPMetadata("0", "2", "3")),
        ("a\nb\nc", SSPMetadata("0", "2", "3")),  # a last line without line ending counts
        ("\n\n", SSPMetadata("0", "1", "2")),  # empty lines are messages too
    ],
)
def test_metadata_from_line_count(tmp_path: Path, content: str, expected: SSPMetadata) -> None:
    path = write(tmp_path / "in.txt", content)
    admin = FileSystemFactory().get_admin(SYSTEM, config(tmp_path, **{"in": str(path)}))
    assert asyncio.run(admin.get_metadata(["in"])) == {"in": {0: expected}}


def test_count_lines_reads_in_chunks(tmp_path: Path) -> None:
    path = write(tmp_path / "big.txt", "x" * 3000 + "\n" + ("line\n" * 300_000) + "tail")
    assert count_lines(path) == 300_002


def test_offsets_are_integers_and_end_of_stream_sorts_last(tmp_path: Path) -> None:
    admin = FileSystemFactory().get_admin(SYSTEM, config(tmp_path))
    assert admin.offset_comparator("2", "10") < 0
    assert admin.offset_comparator("10", "2") > 0
    assert admin.offset_comparator("7", "7") == 0
    assert admin.offset_comparator(END_OF_STREAM_OFFSET, "99999") > 0
    assert admin.offset_comparator("0", END_OF_STREAM_OFFSET) < 0
    assert admin.offset_after("0") == "1"
    assert admin.offset_after("41") == "42"
    with pytest.raises(SamzaError, match="not a file offset"):
        admin.offset_after("abc")


def test_messages_are_lines_with_line_numbers_then_end_of_stream(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "first line\n\nthird, with ünïcode\r\nlast without newline")
    polls = read_all(config(tmp_path, **{"in": str(path)}))
    assert polls == [
        [
            ("0", "first line"),
            ("1", ""),
            ("2", "third, with ünïcode"),
            ("3", "last without newline"),
            (END_OF_STREAM_OFFSET, None),
        ]
    ]


def test_empty_file_is_just_end_of_stream(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "")
    assert read_all(config(tmp_path, **{"in": str(path)})) == [[(END_OF_STREAM_OFFSET, None)]]


def test_register_at_an_offset_skips_the_lines_before_it(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "".join(f"m{i}\n" for i in range(10)))
    cfg = config(tmp_path, **{"in": str(path)})
    assert read_all(cfg, offset="7") == [
        [("7", "m7"), ("8", "m8"), ("9", "m9"), (END_OF_STREAM_OFFSET, None)]
    ]
    # Resuming after the last line (a finished job run again) reads only end-of-stream.
    assert read_all(cfg, offset="10") == [[(END_OF_STREAM_OFFSET, None)]]


def test_poll_returns_at_most_a_batch_per_partition(tmp_path: Path) -> None:
    total = 2 * POLL_BATCH + 5
    path = write(tmp_path / "in.txt", "".join(f"{i}\n" for i in range(total)))
    polls = read_all(config(tmp_path, **{"in": str(path)}))
    assert [len(p) for p in polls] == [POLL_BATCH, POLL_BATCH, 5 + 1]
    flat = [item for poll in polls for item in poll]
    assert flat[:-1] == [(str(i), str(i)) for i in range(total)]
    assert flat[-1] == (END_OF_STREAM_OFFSET, None)


def test_end_of_stream_comes_in_its_own_poll_when_the_lines_fill_the_batch(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "a\nb\nc\nd\n")
    polls = read_all(config(tmp_path, **{"in": str(path)}), batch_size=2)
    assert polls == [[("0", "a"), ("1", "b")], [("2", "c"), ("3", "d")], [(END_OF_STREAM_OFFSET, None)]]


def test_several_streams_in_one_poll(tmp_path: Path) -> None:
    a = write(tmp_path / "a.txt", "a0\na1\n")
    b = write(tmp_path / "b.txt", "b0\n")
    cfg = config(tmp_path, a=str(a), b=str(b))
    ssp_a, ssp_b = SystemStreamPartition(SYSTEM, "a", 0), SystemStreamPartition(SYSTEM, "b", 0)

    async def go() -> dict[SystemStreamPartition, list[str]]:
        consumer = FileSystemFactory().get_consumer(SYSTEM, cfg)
        consumer.register(ssp_a, "1")
        consumer.register(ssp_b, "0")
        await consumer.start()
        try:
            result = await consumer.poll([ssp_a, ssp_b], 0.0)
            return {ssp: [e.offset for e in batch] for ssp, batch in result.items()}
        finally:
            await consumer.stop()

    assert asyncio.run(go()) == {ssp_a: ["1", END_OF_STREAM_OFFSET], ssp_b: ["0", END_OF_STREAM_OFFSET]}


def test_poll_of_an_unregistered_partition_fails(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "x\n")
    cfg = config(tmp_path, **{"in": str(path)})

    async def go() -> None:
        consumer = FileSystemFactory().get_consumer(SYSTEM, cfg)
        await consumer.start()
        try:
            await consumer.poll([SSP], 0.0)
        finally:
            await consumer.stop()

    with pytest.raises(SystemConsumersError, match="never registered"):
        asyncio.run(go())


def test_bad_offsets_and_partitions_are_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", "x\n")
    consumer = FileSystemFactory().get_consumer(SYSTEM, config(tmp_path, **{"in": str(path)}))
    with pytest.raises(SystemConsumersError, match="not a file offset"):
        consumer.register(SSP, "abc")
    with pytest.raises(SystemConsumersError, match="negative"):
        consumer.register(SSP, "-1")
    with pytest.raises(SystemConsumersError, match="only partition 0"):
        consumer.register(SystemStreamPartition(SYSTEM, "in", 1), "0")


def test_missing_path_key_is_a_config_error_naming_it(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    key = f"systems.{SYSTEM}.streams.in.path"
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")) as info:
        asyncio.run(FileSystemFactory().get_admin(SYSTEM, cfg).get_metadata(["in"]))
    assert info.value.key == key
    with pytest.raises(ConfigError) as info:
        FileSystemFactory().get_consumer(SYSTEM, cfg).register(SSP, "0")
    assert info.value.key == key


def test_missing_input_file_is_an_error_naming_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "in.txt"
    cfg = config(tmp_path, **{"in": str(missing)})
    with pytest.raises(SamzaError, match=r"does not exist") as info:
        asyncio.run(FileSystemFactory().get_admin(SYSTEM, cfg).get_metadata(["in"]))
    assert str(missing) in str(info.value)

    async def start() -> None:
        consumer = FileSystemFactory().get_consumer(SYSTEM, cfg)
        consumer.register(SSP, "0")
        try:
            await consumer.start()
        finally:
            await consumer.stop()

    with pytest.raises(SamzaError, match="does not exist") as info:
        asyncio.run(start())
    assert str(missing) in str(info.value)


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "in.txt", b"ok\n\xff\xfe bad\n")
    with pytest.raises(SamzaError, match=r"line 2 is not valid UTF-8"):
        read_all(config(tmp_path, **{"in": str(path)}))


def test_relative_paths_are_relative_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "rel.txt", "hello\n")
    cfg = Config({f"systems.{SYSTEM}.streams.in.path": "rel.txt"})
    assert read_all(cfg) == [[("0", "hello"), (END_OF_STREAM_OFFSET, None)]]


# -- admin.create_stream ---------------------------------------------------------------------------------
def test_create_stream_creates_an_empty_file_once(tmp_path: Path) -> None:
    cfg = config(tmp_path, made=str(tmp_path / "deep" / "dir" / "made.txt"))
    admin = FileSystemFactory().get_admin(SYSTEM, cfg)
    asyncio.run(admin.create_stream("made", 1))
    assert (tmp_path / "deep" / "dir" / "made.txt").read_text() == ""
    (tmp_path / "deep" / "dir" / "made.txt").write_text("kept\n")
    asyncio.run(admin.create_stream("made", 1))  # exists: left alone
    assert (tmp_path / "deep" / "dir" / "made.txt").read_text() == "kept\n"
    asyncio.run(admin.create_stream("unnamed", 1))  # no path: <output.dir>/<stream>.txt
    assert (tmp_path / "out" / "unnamed.txt").exists()
    with pytest.raises(SamzaError, match="one partition"):
        asyncio.run(admin.create_stream("made", 4))


# -- producer --------------------------------------------------------------------------------------------
def envelope(stream: str, message: Any) -> OutgoingMessageEnvelope:
    return OutgoingMessageEnvelope(SystemStream(SYSTEM, stream), message)


def test_producer_appends_lines_and_writes_them_on_flush(tmp_path: Path) -> None:
    target = tmp_path / "counts.txt"
    target.write_text('{"existing": true}\n')
    cfg = config(tmp_path, counts=str(target))

    async def go() -> tuple[str, str]:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()
        producer.send("t", envelope("counts", {"word": "the", "count": 3}))
        producer.send("t", envelope("counts", "plain text"))
        producer.send("t", envelope("counts", b"bytes text"))
        producer.send("t", envelope("counts", [1, None, "x"]))
        producer.send("t", envelope("counts", 42))
        before = target.read_text()  # buffered: not written yet
        await producer.flush("t")
        after = target.read_text()
        await producer.stop()
        return before, after

    before, after = asyncio.run(go())
    assert before == '{"existing": true}\n'
    assert after.splitlines() == [
        '{"existing": true}',
        '{"word": "the", "count": 3}',
        "plain text",
        "bytes text",
        '[1, null, "x"]',
        "42",
    ]


def test_producer_default_path_is_output_dir_stream_txt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def go(cfg: Config) -> None:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()
        producer.send("t", envelope("results", {"n": 1}))
        await producer.stop()  # stop flushes

    asyncio.run(go(config(tmp_path)))
    assert (tmp_path / "out" / "results.txt").read_text() == '{"n": 1}\n'
    monkeypatch.chdir(tmp_path)
    asyncio.run(go(Config({})))  # no output.dir: ./output
    assert (tmp_path / "output" / "results.txt").read_text() == '{"n": 1}\n'


def test_producer_output_can_be_read_back_as_an_input(tmp_path: Path) -> None:
    target = tmp_path / "roundtrip.txt"
    cfg = config(tmp_path, **{"in": str(target)})

    async def produce() -> None:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()
        for i in range(5):
            producer.send("t", envelope("in", {"i": i}))
        await producer.stop()

    asyncio.run(produce())
    polls = read_all(cfg)
    assert [json.loads(m) for _, m in polls[0][:-1]] == [{"i": i} for i in range(5)]


def test_producer_send_is_safe_from_many_threads(tmp_path: Path) -> None:
    target = tmp_path / "many.txt"
    cfg = config(tmp_path, many=str(target))
    threads, per_thread = 8, 2000

    async def go() -> None:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()

        def worker(n: int) -> None:
            for i in range(per_thread):
                producer.send(f"t{n}", envelope("many", {"thread": n, "i": i, "pad": "x" * (i % 50)}))

        workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        await producer.stop()

    asyncio.run(go())
    records = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(records) == threads * per_thread
    for n in range(threads):  # every line intact; each thread's messages in its order
        assert [r["i"] for r in records if r["thread"] == n] == list(range(per_thread))


def test_producer_refuses_what_cannot_be_one_line(tmp_path: Path) -> None:
    cfg = config(tmp_path)

    async def go() -> None:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()
        try:
            with pytest.raises(SystemProducerError, match="line break"):
                producer.send("t", envelope("bad", "two\nlines"))
            with pytest.raises(SystemProducerError, match="as JSON"):
                producer.send("t", envelope("bad", {"obj": object()}))
            with pytest.raises(SystemProducerError, match="UTF-8"):
                producer.send("t", envelope("bad", b"\xff"))
            producer.send("t", envelope("bad", {"text": "two\nlines"}))  # JSON escapes it
        finally:
            await producer.stop()
        with pytest.raises(SystemProducerError, match="stopped"):
            producer.send("t", envelope("bad", "late"))

    asyncio.run(go())
    assert (tmp_path / "out" / "bad.txt").read_text() == '{"text": "two\\nlines"}\n'


def test_producer_reports_an_unwritable_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    cfg = config(tmp_path, x=str(blocker / "sub" / "x.txt"))  # a directory under a regular file

    async def go() -> None:
        producer = FileSystemFactory().get_producer(SYSTEM, cfg)
        await producer.start()
        try:
            producer.send("t", envelope("x", "hello"))
        finally:
            await producer.stop()

    with pytest.raises(SystemProducerError, match="cannot open"):
        asyncio.run(go())
