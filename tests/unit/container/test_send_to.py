"""``collector.send_to(stream, message, key=None)``: the output of ``send(OutgoingMessageEnvelope(stream,
message, key=key))``, in every loop mode, mixed with envelopes and across tasks; bad streams and refused
messages are errors naming the task, as ``send``'s are."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.container.loop.collector import OutputBuffer, OutputSendError, TaskCollector
from samza_nb.errors import SystemProducerError, TaskFailedError
from samza_nb.systems.file import FileSystemFactory
from samza_nb.systems.inmemory.system import InMemoryBroker, InMemorySystemProducer
from samza_nb.systems.log import LogSystemFactory
from samza_nb.testing import LOOP_MODES, LoopMode
from tests.unit.systems.log.producing import read_all

from .harness import OUT, Job

SIDE = SystemStream("test", "side")


def _sends(envelope: Any, collector: Any, with_send_to: bool) -> None:
    """Per message: a plain value, every third message a keyed one, every fifth an envelope elsewhere."""
    value = envelope.message
    if with_send_to:
        collector.send_to(OUT, value)
        if value % 3 == 0:
            collector.send_to(OUT, -value, key=f"k{value % 4}")
    else:
        collector.send(OutgoingMessageEnvelope(OUT, value))
        if value % 3 == 0:
            collector.send(OutgoingMessageEnvelope(OUT, -value, key=f"k{value % 4}"))
    if value % 5 == 0:
        collector.send(OutgoingMessageEnvelope(SIDE, value))


class WithSendTo:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        _sends(envelope, collector, True)


class WithEnvelopes:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        _sends(envelope, collector, False)


def _outputs(task: type, mode: LoopMode, inputs: int, outputs: int) -> tuple[Any, Any]:
    job = Job(inputs={"in": inputs})
    job.broker.create_stream("out", outputs)
    job.broker.create_stream("side", 1)
    for partition in range(inputs):
        job.send("in", list(range(partition * 1000, partition * 1000 + 300)), partition=partition)
    job.end()
    job.run(task, mode=mode)
    return job.output("out"), job.output("side")


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
@pytest.mark.parametrize(("inputs", "outputs"), [(1, 1), (4, 1), (4, 3)])
def test_send_to_sends_what_send_of_the_envelope_sends(mode: LoopMode, inputs: int, outputs: int) -> None:
    expected = _outputs(WithEnvelopes, mode, inputs, outputs)
    got = _outputs(WithSendTo, mode, inputs, outputs)
    assert sum(len(values) for values in expected[0].values()) == inputs * 400

    def every(output: dict[int, list[Any]]) -> list[Any]:
        return sorted(value for values in output.values() for value in values)

    assert (every(got[0]), every(got[1])) == (every(expected[0]), every(expected[1]))
    if not mode.thread_pool_size:  # (threads interleave their sends as they run)
        assert got == expected


def _buffer() -> tuple[InMemoryBroker, OutputBuffer, TaskCollector, TaskCollector]:
    namespace = f"send-to-{uuid.uuid4().hex}"
    broker = InMemoryBroker.named(namespace, "test")
    producer = InMemorySystemProducer(broker, Config({}), "test")
    outputs = OutputBuffer({"test": producer})
    return (
        broker,
        outputs,
        TaskCollector("a", {"test": producer}, outputs),
        TaskCollector("b", {"test": producer}, outputs),
    )


def test_runs_of_two_tasks_and_their_envelopes_reach_the_stream_in_send_order() -> None:
    broker, outputs, a, b = _buffer()
    broker.create_stream("out", 1)
    a.send_to(OUT, 1)
    b.send_to(OUT, 2)  # the same run: tasks of a round alternate
    a.send(OutgoingMessageEnvelope(OUT, 3))
    a.send_to(OUT, 4)
    b.send_to(OUT, 5, key="k")
    assert outputs.first_sent() == ("a", OutgoingMessageEnvelope(OUT, 1))
    assert outputs.last_sent() == ("b", OutgoingMessageEnvelope(OUT, 5, key="k"))
    outputs.flush()
    assert broker.read("out") == {0: [1, 2, 3, 4, 5]}
    a.send_to(OUT, 6)
    assert outputs.last_sent() == ("a", OutgoingMessageEnvelope(OUT, 6))
    outputs.flush()
    assert broker.read("out") == {0: [1, 2, 3, 4, 5, 6]}


def test_a_refused_run_names_the_task_of_its_first_message_and_sends_nothing_of_it() -> None:
    broker, outputs, a, b = _buffer()
    broker.create_stream("out", 1)
    broker.end_stream("out")
    b.send_to(OUT, 1)
    a.send_to(OUT, 2)
    with pytest.raises(OutputSendError, match=r"task 'b'.*has ended") as info:
        outputs.flush()
    assert info.value.task_name == "b"
    assert broker.read("out") == {0: []}


@pytest.mark.parametrize(
    ("stream", "message"),
    [
        ("test.out", r"'test\.out': expected a SystemStream"),
        (None, r"None: expected a SystemStream"),
        (SystemStream("nowhere", "out"), r"nowhere\.out: no system 'nowhere' is configured"),
    ],
)
@pytest.mark.parametrize("buffered", [True, False])
def test_a_bad_stream_is_an_error_naming_the_task(stream: Any, message: str, buffered: bool) -> None:
    broker, _, a, _ = _buffer()
    producer = InMemorySystemProducer(broker, Config({}), "test")
    collector = a if buffered else TaskCollector("a", {"test": producer})
    for key in (None, "k"):
        with pytest.raises(SystemProducerError, match=rf"task 'a' sent to {message}"):
            collector.send_to(stream, 1, key)


def test_a_job_whose_task_sends_to_a_bad_stream_fails_at_that_message() -> None:
    class Bad:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            collector.send_to("test.out", envelope.message)

    job = Job()
    job.send("in", [1])
    job.end()
    with pytest.raises(TaskFailedError, match="expected a SystemStream"):
        job.run(Bad)


class AsyncWithSendTo:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message % 7 == 0:
            await asyncio.sleep(0)  # suspended: sends from its Task, the others in line
        _sends(envelope, collector, True)


class AsyncWithEnvelopes:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message % 7 == 0:
            await asyncio.sleep(0)
        _sends(envelope, collector, False)


@pytest.mark.parametrize("concurrency", ["1", "8"])
def test_an_async_task_sends_with_send_to_what_it_sends_with_envelopes(concurrency: str) -> None:
    def outputs(task: type) -> tuple[Any, Any]:
        job = Job(inputs={"in": 2}, task__max__concurrency=concurrency)
        job.broker.create_stream("out", 1)
        job.broker.create_stream("side", 1)
        for partition in range(2):
            job.send("in", list(range(partition * 1000, partition * 1000 + 200)), partition=partition)
        job.end()
        job.run(task)
        return job.output("out"), job.output("side")

    with_send_to, with_envelopes = outputs(AsyncWithSendTo), outputs(AsyncWithEnvelopes)
    if concurrency == "1":
        assert with_send_to == with_envelopes
        return

    # Messages of the two tasks (inputs 0-199 and 1000-1199) meet in one output partition, and a suspended
    # message (every seventh) resumes when the loop gets to it: with 8 in flight the interleaving is the
    # scheduler's. Each task's output is the same messages either way.
    def per_task(output: Any) -> list[list[int]]:
        values = [value for partition in sorted(output) for value in output[partition]]
        return [sorted(v for v in values if (abs(v) >= 1000) == second) for second in (False, True)]

    for sent_to, enveloped in zip(with_send_to, with_envelopes, strict=True):
        assert all(per_task(sent_to)) and per_task(sent_to) == per_task(enveloped)


def test_producers_that_take_no_values_get_the_envelopes_of_a_run(tmp_path: Path) -> None:
    """The durable log takes batches of envelopes, the file system one envelope at a time: a run of
    ``send_to`` reaches either as the envelopes ``send`` would have sent, in order with the others."""
    log_config = Config({"systems.log.log.dir": str(tmp_path / "log"), "systems.log.samza.msg.serde": "json"})
    file_config = Config({"systems.file.streams.out.path": str(tmp_path / "out.txt")})
    log, file = SystemStream("log", "out"), SystemStream("file", "out")

    async def send_all() -> None:
        producers = {
            "log": LogSystemFactory().get_producer("log", log_config),
            "file": FileSystemFactory().get_producer("file", file_config),
        }
        for producer in producers.values():
            await producer.start()
        outputs = OutputBuffer(producers)
        a, b = TaskCollector("a", producers, outputs), TaskCollector("b", producers, outputs)
        for stream in (log, file):
            a.send_to(stream, 1)
            b.send_to(stream, 2)
            a.send(OutgoingMessageEnvelope(stream, 3))
            b.send_to(stream, 4)
        outputs.flush()
        for producer in producers.values():
            await producer.stop()

    asyncio.run(send_all())
    assert (tmp_path / "out.txt").read_text().splitlines() == ["1", "2", "3", "4"]
    read = read_all(log_config, [SystemStreamPartition("log", "out", 0)])
    assert [envelope.message for envelope in read[SystemStreamPartition("log", "out", 0)]] == [1, 2, 3, 4]
