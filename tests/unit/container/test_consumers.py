"""SystemConsumers: one envelope per partition in the chooser; polls only for empty, open partitions."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from samza_nb import Config, SystemStreamPartition
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.container.consumers import SystemConsumers
from samza_nb.systems.inmemory.system import InMemorySystemFactory


class RecordingConsumer:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.polls: list[set[str]] = []

    def register(self, ssp: Any, offset: str) -> None:
        self.inner.register(ssp, offset)

    async def start(self) -> None:
        await self.inner.start()

    async def poll(self, ssps: Any, timeout: float) -> Any:
        self.polls.append({str(s) for s in ssps})
        return await self.inner.poll(ssps, min(timeout, 0.01))

    async def stop(self) -> None:
        await self.inner.stop()


class CountingChooser(RoundRobinChooser):
    __slots__ = ("held",)

    def __init__(self) -> None:
        super().__init__()
        self.held: dict[Any, int] = {}
        inner_update, inner_choose = self.update, self.choose

        def update(envelope: Any) -> None:
            self.held[envelope.ssp] = self.held.get(envelope.ssp, 0) + 1
            assert self.held[envelope.ssp] == 1, f"two envelopes of {envelope.ssp} in the chooser"
            inner_update(envelope)

        def choose() -> Any:
            envelope = inner_choose()
            if envelope is not None:
                self.held[envelope.ssp] -= 1
            return envelope

        self.update, self.choose = update, choose


def test_the_chooser_holds_one_envelope_per_partition_and_polls_ask_only_for_empty_open_ones() -> None:
    namespace = f"c-{uuid.uuid4().hex}"
    config = Config({"systems.mem.inmemory.namespace": namespace})
    broker = InMemorySystemFactory.broker("mem", config)
    broker.create_stream("a")
    broker.create_stream("b")
    for i in range(3):
        broker.send("a", i)
    broker.end_stream("a")
    a, b = SystemStreamPartition("mem", "a", 0), SystemStreamPartition("mem", "b", 0)
    recording = RecordingConsumer(InMemorySystemFactory().get_consumer("mem", config))
    chooser = CountingChooser()
    arrived = asyncio.Event()  # set by the consumers whenever a poll brought messages (their on_data)
    consumers = SystemConsumers(chooser, {"mem": recording}, poll_interval_ms=10, on_data=arrived.set)
    consumers.register(a, "0")
    consumers.register(b, "0")

    async def scenario() -> list[str]:
        await consumers.start()
        taken = []
        while True:  # bounded by the wait_for below
            envelope = chooser.choose()
            if envelope is None:
                arrived.clear()
                await arrived.wait()
                continue
            taken.append(f"{envelope.ssp.stream}:{envelope.offset}")
            consumers.refill(envelope.ssp)
            if envelope.ssp == b:
                break
            if envelope.is_end_of_stream:
                broker.send("b", "late")
        await consumers.stop()
        return taken

    taken = asyncio.run(asyncio.wait_for(scenario(), 30))  # a bound for a hang, not a window
    assert taken == ["a:0", "a:1", "a:2", "a:END_OF_STREAM", "b:0"]
    assert recording.polls[0] == {"mem.a#0", "mem.b#0"}  # the first poll asks for everything
    # Later polls never ask for a partition that ended.
    assert all("mem.a#0" not in polled for polled in recording.polls[1:])
