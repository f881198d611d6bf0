"""Headers in the durable log: its format, the DurableLog handle, the system's producer and consumer, jobs."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.streams import NO_HEADERS, IncomingMessageEnvelope
from samza_nb.errors import SystemProducerError
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.log import DurableLog, LogSystemFactory
from samza_nb.systems.log.format import decode_batch, decode_headers, encode_headers, read_header

from .producing import read_all as read_by_partition
from .producing import write_all

HEADERS = (("trace", b"abc"), ("trace", b""), ("null", None), ("ü", b"\xff"))

WRITTEN_BEFORE_NULL_HEADER_VALUES = bytes.fromhex(
    "534e4c31a6412ed607000000000000000068e5cf8b01000002000000430000000700000000000000020000000200000002"
    "000000ffffffff1b0000000a000000763076316b30020005007472616365030000006162630500747261636500000000010001"
    "006e0100000001"
)
"""A batch as the format wrote it before None header values and empty header entries existed (by
``encode_batch(7, 1700000000000, [b"v0", b"v1"], [b"k0", None], [encode_headers(...)] * 2)`` at commit
814ea61): offsets 7 and 8, the first with headers trace=abc and trace=(empty), the second n=0x01."""


def config(tmp_path: Path, **extra: str) -> Config:
    return Config({"systems.log.log.dir": str(tmp_path / "log"), **extra})


def test_header_encoding_keeps_none_values_and_reads_what_was_written_before(tmp_path: Path) -> None:
    assert decode_headers(encode_headers(HEADERS)) == HEADERS
    assert encode_headers(()) == b"" and decode_headers(b"") is NO_HEADERS
    batch = decode_batch(
        WRITTEN_BEFORE_NULL_HEADER_VALUES, read_header(WRITTEN_BEFORE_NULL_HEADER_VALUES, 0, 0)
    )
    assert (batch.base, list(batch.values), list(batch.keys or [])) == (7, [b"v0", b"v1"], [b"k0", None])
    assert batch.headers == [(("trace", b"abc"), ("trace", b"")), (("n", b"\x01"),)]


def test_durable_log_send_batch_and_read_records_carry_headers(tmp_path: Path) -> None:
    with DurableLog(tmp_path) as log:
        log.create_stream("rr", 2)
        log.create_stream("keyed", 3)
        log.send("rr", b"single", partition=0, headers=HEADERS)
        log.send_batch(
            "rr", [(None, b"r%d" % i, None) for i in range(4)], headers=[(), (("i", b"1"),), (), ()]
        )
        records = [(b"k%d" % i, b"v%d" % i, None) for i in range(9)]
        log.send_batch("keyed", records, headers=[(("i", b"%d" % i),) if i % 2 else () for i in range(9)])
        log.send_batch("keyed", records[:2], headers=[(), ()])  # no record has any: no headers column
        log.flush()
        rr = {p: [(v, h) for _, _, v, h in log.read_records("rr", p)] for p in range(2)}
        keyed = [(v, h) for p in range(3) for _, _, v, h in log.read_records("keyed", p)]
        middle = list(log.read_records("keyed", 0, 1))
        assert [r[:3] for r in middle] == list(log.read("keyed", 0, 1))
    assert sorted(rr[0] + rr[1]) == sorted(
        [(b"single", HEADERS), (b"r0", ()), (b"r1", (("i", b"1"),)), (b"r2", ()), (b"r3", ())]
    )
    assert sorted(keyed) == sorted(
        [(b"v%d" % i, (("i", b"%d" % i),) if i % 2 else ()) for i in range(9)] + [(b"v0", ()), (b"v1", ())]
    )


def read_all(cfg: Config, ssps: Sequence[SystemStreamPartition]) -> list[IncomingMessageEnvelope]:
    polled = read_by_partition(cfg, ssps)
    return [e for ssp in ssps for e in polled.get(ssp, [])]


@pytest.mark.parametrize("batched", [False, True])
def test_the_system_carries_headers_from_producer_to_consumer(tmp_path: Path, batched: bool) -> None:
    cfg = config(
        tmp_path, **{"systems.log.streams.b.partitions": "2", "systems.log.samza.msg.serde": "string"}
    )
    a, b = SystemStream("log", "a"), SystemStream("log", "b")
    sends = [
        OutgoingMessageEnvelope(a, "a0", headers=HEADERS),
        OutgoingMessageEnvelope(a, "a1"),
        OutgoingMessageEnvelope(b, "b0", key=b"x", headers=(("k", bytearray(b"v")),)),
        OutgoingMessageEnvelope(b, "b1", key=b"y"),
        OutgoingMessageEnvelope(SystemStream("log", "c"), "c0"),
    ]

    write_all(cfg, sends, batched=batched)
    ssps = [SystemStreamPartition("log", s, p) for s, p in (("a", 0), ("b", 0), ("b", 1), ("c", 0))]
    got = {e.message: e.headers for e in read_all(cfg, ssps)}
    assert got == {"a0": HEADERS, "a1": (), "b0": (("k", b"v"),), "b1": (), "c0": ()}
    assert all(e.headers is NO_HEADERS for e in read_all(cfg, ssps) if not e.headers)


def test_headers_the_log_cannot_carry_are_refused_naming_the_stream(tmp_path: Path) -> None:
    cfg = config(tmp_path)

    async def write() -> None:
        producer = LogSystemFactory().get_producer("log", cfg)
        await producer.start()
        producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "s"), b"x", headers=(("n", 5),)))
        try:
            await producer.flush("t")
        finally:
            producer.log.close()

    with pytest.raises(SystemProducerError, match=r"message to log\.s: header 'n' has a int value \(5\)"):
        asyncio.run(write())


class CopyHeaders:
    """Sends each message to log.out with its headers plus one naming the offset it came from."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        headers = (*envelope.headers, ("from-offset", envelope.offset.encode()))
        collector.send(OutgoingMessageEnvelope(SystemStream("log", "out"), envelope.message, headers=headers))


def test_headers_round_trip_through_a_job_on_the_durable_log(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log") as log:
        log.create_stream("in", 1)
        log.send("in", b"m0", headers=HEADERS)
        log.send("in", b"m1")
    cfg = config(
        tmp_path,
        **{
            "job.name": "headers",
            "task.inputs": "log.in",
            "systems.log.samza.offset.default": "oldest",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        },
    )
    LocalJobRunner(cfg, CopyHeaders, max_messages=2).run(timeout=30)
    with DurableLog(tmp_path / "log") as log:
        out = [(value, headers) for _, _, value, headers in log.read_records("out", 0)]
    assert out == [(b"m0", (*HEADERS, ("from-offset", b"0"))), (b"m1", (("from-offset", b"1"),))]


def test_headers_the_log_cannot_hold_are_refused_naming_the_stream(tmp_path: Path) -> None:
    """More than 65535 headers, a name over 65535 bytes or a name that is not text: a SystemProducerError
    naming the stream, never a struct or codec error from deep inside."""
    out = SystemStream("log", "out")
    bad = [
        (tuple(("h", b"") for _ in range(70_000)), "stream 'out': 70000 headers on one record"),
        ((("n" * 70_000, b""),), "stream 'out': header name 'nnnn.* is 70000 bytes"),
        ((("\ud800", b""),), r"log.out: header name '\\ud800' is not valid text"),
    ]

    async def refused(headers: Any) -> None:
        producer = LogSystemFactory().get_producer(
            "log", Config({"systems.log.log.dir": str(tmp_path / "log")})
        )
        await producer.start()
        producer.send("t", OutgoingMessageEnvelope(out, b"v", headers=headers))
        await producer.flush("t")

    for headers, message in bad:
        with pytest.raises(SystemProducerError, match=message):
            asyncio.run(refused(headers))
