"""Write through the durable log system's producer and read back through its consumer (shared by the log
system's tests)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from samza_nb import Config, OutgoingMessageEnvelope, SystemStreamPartition
from samza_nb.api.streams import IncomingMessageEnvelope
from samza_nb.systems.log import LogSystemFactory


def write_all(cfg: Config, sends: Sequence[OutgoingMessageEnvelope], *, batched: bool) -> None:
    """Send ``sends`` with a new producer of system ``log`` (one ``send_batch``, or ``send`` each), then
    stop it (which flushes)."""

    async def write() -> None:
        producer = LogSystemFactory().get_producer("log", cfg)
        await producer.start()
        if batched:
            producer.send_batch(sends)
        else:
            for envelope in sends:
                producer.send("t", envelope)
        await producer.stop()

    asyncio.run(write())


def read_all(
    cfg: Config, ssps: Sequence[SystemStreamPartition], start: str = "0"
) -> dict[SystemStreamPartition, list[IncomingMessageEnvelope]]:
    """What one poll of a new consumer of ``ssps`` (from ``start``) hands out, by partition."""

    async def go() -> dict[SystemStreamPartition, list[IncomingMessageEnvelope]]:
        consumer = LogSystemFactory().get_consumer("log", cfg)
        for ssp in ssps:
            consumer.register(ssp, start)
        await consumer.start()
        try:
            polled = await consumer.poll(ssps, 0)
        finally:
            await consumer.stop()
        return {ssp: list(envelopes) for ssp, envelopes in polled.items()}

    return asyncio.run(go())
