"""A container's live query service on its own event loop: a live lookup is read and answered at the loop's
turn, with no thread taking the request and waiting for the loop (each hand-over of the interpreter lock in
a busy container cost a scheduling quantum on a loaded machine: benchmarks/live_queries.py)."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import uuid
from pathlib import Path
from typing import Any

from samza_nb import Config
from samza_nb.container import SamzaContainer
from samza_nb.container.queries import StoreReader
from samza_nb.container.queries.loop_server import LiveQueryServer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.systems.inmemory.system import InMemoryBroker
from samza_nb.testing.runner import task_factory
from tests.eventually import aeventually


class Count:
    """Counts each message (a word) in the store ``counts``."""

    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        word = envelope.message
        self.counts.put(word, (self.counts.get(word) or 0) + 1)


def container(tmp_path: Path) -> tuple[SamzaContainer, InMemoryBroker]:
    namespace = f"queries-{uuid.uuid4().hex}"
    broker = InMemoryBroker.named(namespace, "mem")
    broker.create_stream("in", 2)
    config = Config(
        {
            "job.name": "queried",
            "task.inputs": "mem.in",
            "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            "systems.mem.inmemory.namespace": namespace,
            "systems.mem.samza.offset.default": "oldest",
            "job.logged.store.base.dir": str(tmp_path / "state"),
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "long",
        }
    )
    for word in ["a", "b", "a", "c", "a"]:
        broker.send("in", word, partition=0)
    broker.send("in", "d", partition=1)
    return SamzaContainer(config, task_factory(Count), planner=plan_job_model), broker


def live_count(reader: StoreReader, word: str) -> Any:
    return reader.get("counts", word).value


def test_a_live_lookup_asked_on_the_containers_loop_is_read_there(tmp_path: Path) -> None:
    """main refused it ("cannot run on container 0's own loop thread"): the query service could not answer
    on the loop, so a thread took each request and waited for the loop's turn, then for the lock."""
    job, broker = container(tmp_path)

    async def main() -> None:
        run = asyncio.create_task(job.run())
        reader = StoreReader(job)
        await aeventually(lambda: job.storage is not None and job.storage.partitions())
        assert await aeventually(lambda: live_count(reader, "a") == 3)  # read here, on the loop's thread
        answer = reader.get("counts", "d")
        assert (answer.value, answer.container) == (1, job.container_id)
        job.shutdown()
        await run

    asyncio.run(asyncio.wait_for(main(), 30))
    broker.end_stream("in")


def ask(url: str, token: str | None, requests: list[tuple[str, str, bytes]]) -> list[tuple[int, bytes]]:
    """``requests`` one after another on one kept-alive connection; each answer's status and body."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    answers = []
    for method, path, body in requests:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        conn.request(method, path, body, headers)
        response = conn.getresponse()
        answers.append((response.status, response.read()))
    conn.close()
    return answers


def lookup(word: str, committed: bool = False) -> tuple[str, str, bytes]:
    key = base64.b64encode(word.encode()).decode()
    body = {"store": "counts", "key": key, "partition": None, "committed": committed}
    return "POST", "/get", json.dumps(body).encode()


def test_the_query_service_answers_on_the_loop_over_one_kept_alive_connection(tmp_path: Path) -> None:
    job, broker = container(tmp_path)

    async def main() -> None:
        run = asyncio.create_task(job.run())
        reader = StoreReader(job)
        await aeventually(lambda: job.storage is not None and job.storage.partitions())
        await aeventually(lambda: live_count(reader, "a") == 3 and live_count(reader, "d") == 1)
        server = await LiveQueryServer.open(job, "the-token")
        try:
            requests = [
                lookup("a"),
                lookup("d"),
                lookup("zzz"),
                lookup("a", committed=True),  # the state files: answered from a worker thread
                ("POST", "/get", b"not json"),
                ("GET", "/nothing", b""),
                lookup("c"),
            ]
            answers = await asyncio.to_thread(ask, server.url, server.token, requests)
            refused = await asyncio.to_thread(ask, server.url, None, [lookup("a")])
            wrong = await asyncio.to_thread(ask, server.url, "not-the-token", [lookup("a")])
        finally:
            server.stop()
        job.shutdown()
        await run
        found = [json.loads(body) for _, body in answers]
        assert [status for status, _ in answers] == [200, 200, 200, 200, 400, 404, 200]
        assert [(f["found"], f["value"], f["partition"]) for f in (found[0], found[1], found[6])] == [
            (True, 3, 0),
            (True, 1, 1),
            (True, 1, 0),
        ]
        assert found[2]["found"] is False and sorted(found[2]["searched"]) == [0, 1]
        assert found[3]["committed"] is True and found[3]["found"] is False  # nothing committed yet
        assert "store and key" in found[4]["error"]
        assert refused[0][0] == wrong[0][0] == 401

    asyncio.run(asyncio.wait_for(main(), 30))
    broker.end_stream("in")
