"""SQL into a running container through its query service and the coordinator's union
(:mod:`samza_nb.container.queries`, :mod:`samza_nb.coordinator.store_queries`), with a real container,
DuckDB and HTTP: an answer is the whole committed state or a refusal naming the container, never the
part of it that happened to be readable."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.job_model import ContainerModel, JobModel, TaskModel
from samza_nb.container import ContainerState, SamzaContainer
from samza_nb.container.queries import StoreNotReady, StoreReader
from samza_nb.container.queries.server import QueryServer
from samza_nb.coordinator.status import ContainerReport, JobStatus
from samza_nb.coordinator.store_queries import StoreQueries
from samza_nb.storage.duckdb import DuckDBStoreFactory
from tests.eventually import eventually

from .harness import Job

OPENING = threading.Event()  # the gated factory is opening partition 0
OPEN = threading.Event()  # ... and may go on


class GatedStoreFactory(DuckDBStoreFactory):
    """The DuckDB store, whose partition 0 opens only once the test lets it (a store slow to open: a big
    preload, a long restore): meanwhile the container's first task has its state file open, the second
    not yet."""

    def get_store(self, store_name: str, partition: int, *args: Any, **kwargs: Any) -> Any:
        if partition == 0:
            OPENING.set()
            assert OPEN.wait(30), "the test never let partition 1 open"
        return super().get_store(store_name, partition, *args, **kwargs)


class Count:
    """Counts each message in the store ``counts``."""

    def init(self, context: Any) -> None:
        self.store = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.store.put(envelope.message, (self.store.get(envelope.message) or 0) + 1)


def counting_job(tmp_path: Path) -> Job:
    return Job(
        {"in": 2},
        **{
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "int",
            "job.logged.store.base.dir": str(tmp_path),
            "task.commit.ms": "50",
        },
    )


class Serving:
    """A container running on its own thread, its query service, and the coordinator's queries of it."""

    def __init__(self, container: SamzaContainer) -> None:
        self.container = container
        self.server = QueryServer(container)
        self.error: BaseException | None = None
        self.made: list[StoreQueries] = []
        self.thread = threading.Thread(target=self._run, name="container under query")
        self.thread.start()

    def _run(self) -> None:
        try:
            asyncio.run(self.container.run())
        except BaseException as exc:
            self.error = exc

    def queries(self, extra_task: TaskModel | None = None) -> StoreQueries:
        """The coordinator's queries, with this container's report (as it sends it while it runs); with
        ``extra_task``, the coordinator's job model gives the container that task too."""
        cid = self.container.container_id
        report = ContainerReport(
            cid, "here", ContainerState.RUNNING, 0, query_url=self.server.url, query_token=self.server.token
        )

        def model() -> JobModel:
            running = self.container.job_model
            assert running is not None
            if extra_task is None:
                return running
            tasks = {**running.containers[cid].tasks, extra_task.name: extra_task}
            return replace(running, containers={cid: ContainerModel(cid, tasks)})

        status = JobStatus("test-job", (cid,), {cid: report})
        queries = StoreQueries(self.container.config, model, lambda: status)
        self.made.append(queries)
        return queries

    def close(self) -> None:
        """Close the coordinator's kept-alive connections."""
        for queries in self.made:
            queries.close()

    def stop(self) -> None:
        OPEN.set()
        self.container.shutdown()
        self.thread.join(30)
        self.server.stop()
        assert not self.thread.is_alive(), "the container did not stop"


@pytest.fixture
def gate() -> Iterator[None]:
    OPENING.clear()
    OPEN.clear()
    yield
    OPEN.set()


def test_sql_refuses_while_a_container_opens_its_stores_then_answers_the_whole_state(
    tmp_path: Path, gate: None
) -> None:
    job = counting_job(tmp_path)
    job.send("in", ["a", "a", "b"], partition=0)
    job.send("in", ["c", "c"], partition=1)
    OPEN.set()
    first = Serving(job.container(Count))
    eventually(lambda: first.container.status().processed == 5)
    first.stop()  # both tasks commit their counts
    OPEN.clear()
    everything = [("a", 2, 0), ("b", 1, 0), ("c", 2, 1)]

    # The container starts again: partition 0's state file is open, its store opening; partition 1's file
    # is not open yet.
    job.config["stores.counts.factory"] = f"{__name__}.GatedStoreFactory"
    serving = Serving(job.container(Count))
    try:
        assert OPENING.wait(30)
        queries = serving.queries()
        # Partition 0's committed rows alone would pass for the container's whole state: refused, naming it.
        with pytest.raises(StoreNotReady, match=r"^container 0 "):
            StoreReader(serving.container).rows("counts")
        with pytest.raises(StoreNotReady, match=r"^container 0 has not opened its stores yet"):
            queries.sql("counts", "SELECT key, value, partition FROM counts ORDER BY key")

        OPEN.set()
        eventually(lambda: serving.container.state is ContainerState.RUNNING or serving.error)
        assert serving.error is None
        rows = queries.sql("counts", "SELECT key, value, partition FROM counts ORDER BY key").rows
        assert rows == everything
    finally:
        serving.stop()
        serving.close()


def test_sql_names_a_container_that_stopped_answering(tmp_path: Path, gate: None) -> None:
    job = counting_job(tmp_path)
    job.send("in", ["a"], partition=0)
    OPEN.set()
    serving = Serving(job.container(Count))
    try:
        eventually(lambda: serving.container.state is ContainerState.RUNNING)
        queries = serving.queries()
        assert queries.sql("counts", "SELECT count(*) FROM counts").rows in ([(0,)], [(1,)])
    finally:
        serving.stop()
    # Its last report still gives its address (the coordinator has not heard of its end): one line naming
    # it (its stores closed, or it did not answer), not an answer without its part.
    try:
        with pytest.raises(StoreNotReady, match=r"^container 0[: ]"):
            queries.sql("counts", "SELECT count(*) FROM counts")
    finally:
        serving.close()


def test_sql_refuses_a_container_that_answers_for_other_partitions_than_the_job_model_gives_it(
    tmp_path: Path, gate: None
) -> None:
    job = counting_job(tmp_path)
    job.send("in", ["a"], partition=0)
    job.send("in", ["c"], partition=1)
    OPEN.set()
    serving = Serving(job.container(Count))
    try:
        eventually(lambda: serving.container.state is ContainerState.RUNNING)
        # The coordinator's model gives the container a third task it does not run (a container still on
        # an older model): its answer lacks partition 2, so the union would lack it too.
        third = TaskModel("Partition 2", frozenset(), 2)
        with pytest.raises(
            StoreNotReady,
            match=r"^container 0 answered for partitions 0, 1 of store 'counts', not for its partitions "
            r"0, 1, 2 in the job model",
        ):
            serving.queries(third).sql("counts", "SELECT count(*) FROM counts")
    finally:
        serving.stop()
        serving.close()
