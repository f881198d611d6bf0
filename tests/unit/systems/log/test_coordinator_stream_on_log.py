"""The coordinator stream of a job without job.default.system lives on the durable log, byte-exact."""

from __future__ import annotations

import asyncio
from pathlib import Path

from samza_nb import Config
from samza_nb.coordinator.messages import CoordinatorStreamMessage as Msg
from samza_nb.coordinator.stream_store import CoordinatorStreamStore
from samza_nb.systems.log import DurableLog


def test_the_coordinator_stream_is_written_to_and_read_back_from_the_log(tmp_path: Path) -> None:
    config = Config({"job.name": "clicks", "job.logged.store.base.dir": str(tmp_path)})

    async def write() -> None:
        store = CoordinatorStreamStore(config)
        await store.start()
        await store.send([Msg.set_config("a", "1", "t"), Msg.set_config("b", "2", "t")])
        await store.send([Msg.delete("set-config", "a", "t")])
        await store.stop()

    async def read() -> dict[str, str]:
        store = CoordinatorStreamStore(config)
        await store.start()
        result = store.config()
        await store.stop()
        return result

    asyncio.run(write())
    assert asyncio.run(read()) == {"b": "2"}
    with DurableLog(tmp_path / "log") as log:
        records = list(log.read("__samza_coordinator_clicks_1", 0))
    assert [offset for offset, _, _ in records] == [0, 1, 2]
    assert records[0][1] == Msg.set_config("a", "1", "t").encode()[0]
    assert records[2][2] is None  # the delete is a tombstone
