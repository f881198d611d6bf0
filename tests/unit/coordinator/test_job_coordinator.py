"""JobCoordinator on the in-memory system: model persistence, refusals, HTTP service, status reports."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from samza_nb import Config, ConfigError
from samza_nb.api.job_model import JobModel
from samza_nb.coordinator.changes import JobChangeRefused
from samza_nb.coordinator.driver_claim import DRIVER_CLAIM
from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.coordinator.status import ContainerReport
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually

from .memory_store import MemoryStore


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"jc-{uuid.uuid4().hex[:8]}"
    yield name
    InMemoryBroker.drop(name)


def job(namespace: str, partitions: int = 4, **extra: str) -> Config:
    broker = InMemoryBroker.named(namespace, system="mem")
    if not broker.has_stream("in"):
        broker.create_stream("in", partitions)
    values = {
        "job.name": "jc-test",
        "task.inputs": "mem.in",
        "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
        "systems.mem.inmemory.namespace": namespace,
        "job.container.count": "2",
    }
    values.update(extra)
    return Config(values)


STATEFUL = {"stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory"}


async def started(config: Config, store: MemoryStore) -> JobCoordinator:
    coordinator = JobCoordinator(config, store=store)
    await coordinator.start()
    return coordinator


def call(url: str, method: str = "GET", body: bytes | None = None) -> tuple[int, Any]:
    """Status and JSON body of one request (an HTTP error answer too)."""
    headers = {"Content-Type": "application/json"} if body is not None else {}
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def get(url: str) -> tuple[int, Any]:
    return call(url)


def put(url: str, body: bytes) -> tuple[int, Any]:
    return call(url, "PUT", body)


def test_the_model_deals_four_tasks_to_two_containers_and_is_persisted(namespace: str) -> None:
    store = MemoryStore()

    async def go() -> None:
        coordinator = await started(job(namespace), store)
        try:
            model = coordinator.job_model
            assert {cid: sorted(c.tasks) for cid, c in model.containers.items()} == {
                "0": ["Partition 0", "Partition 2"],
                "1": ["Partition 1", "Partition 3"],
            }
            assert coordinator.url.startswith("http://127.0.0.1:")
        finally:
            await coordinator.stop()

    asyncio.run(go())
    assert store.changelog_mapping() == {f"Partition {p}": p for p in range(4)}
    assert store.task_containers() == {f"Partition {p}": str(p % 2) for p in range(4)}
    assert store.config()["task.inputs"] == "mem.in"
    assert store.stopped == 1


def test_a_rerun_keeps_the_mapping_and_writes_only_what_changed(namespace: str) -> None:
    store = MemoryStore()

    async def twice() -> None:
        def job_messages() -> int:  # (each run claims the job and releases it: two driver messages)
            return sum(m.type != DRIVER_CLAIM for m in store.messages)

        await (await started(job(namespace), store)).stop()
        written = job_messages()
        await (await started(job(namespace), store)).stop()
        assert job_messages() == written, "an unchanged job wrote to the coordinator stream again"
        await (await started(job(namespace, **{"job.container.count": "1"}), store)).stop()

    asyncio.run(twice())
    assert store.changelog_mapping() == {f"Partition {p}": p for p in range(4)}
    assert store.config()["job.container.count"] == "1"
    assert set(store.task_containers().values()) == {"0"}


def test_existing_changelog_mappings_are_kept_over_the_default_order(namespace: str) -> None:
    store = MemoryStore()
    from samza_nb.coordinator.messages import CoordinatorStreamMessage as M

    store.messages += [M.set_changelog("Partition 0", 3, "t"), M.set_changelog("Partition 3", 0, "t")]

    async def go() -> None:
        await (await started(job(namespace), store)).stop()

    asyncio.run(go())
    mapping = store.changelog_mapping()
    assert mapping == {"Partition 0": 3, "Partition 1": 4, "Partition 2": 5, "Partition 3": 0}


def test_config_keys_no_longer_set_are_deleted(namespace: str) -> None:
    store = MemoryStore()

    async def go() -> None:
        await (await started(job(namespace, **{"custom.key": "x"}), store)).stop()
        assert store.config()["custom.key"] == "x"
        await (await started(job(namespace), store)).stop()

    asyncio.run(go())
    assert "custom.key" not in store.config()


def test_a_partition_count_change_of_a_stateful_job_is_refused_naming_it(namespace: str) -> None:
    store = MemoryStore()
    asyncio.run(_start_stop(job(namespace, **STATEFUL), store))
    other = f"{namespace}-8"
    try:
        InMemoryBroker.named(other, system="mem").create_stream("in", 8)
        changed = job(namespace, **STATEFUL, **{"systems.mem.inmemory.namespace": other})
        with pytest.raises(JobChangeRefused, match=r"partition count changed.*counts.*mem\.in: 8 partitions"):
            asyncio.run(_start_stop(changed, store))
    finally:
        InMemoryBroker.drop(other)
    assert store.changelog_mapping() == {f"Partition {p}": p for p in range(4)}, "the refusal wrote nothing"
    assert store.stopped == 2


def test_a_grouper_change_of_a_stateful_job_is_refused_naming_the_key(namespace: str) -> None:
    store = MemoryStore()
    asyncio.run(_start_stop(job(namespace, **STATEFUL), store))
    changed = job(namespace, **STATEFUL, **{"job.systemstreampartition.grouper.factory": "group-by-ssp"})
    with pytest.raises(
        ConfigError, match=r"grouper.factory changed from 'group-by-partition' to 'group-by-ssp'"
    ):
        asyncio.run(_start_stop(changed, store))


def test_a_stateless_job_may_change_its_partition_count(namespace: str) -> None:
    store = MemoryStore()
    asyncio.run(_start_stop(job(namespace), store))
    other = f"{namespace}-8"
    try:
        InMemoryBroker.named(other, system="mem").create_stream("in", 8)
        asyncio.run(_start_stop(job(namespace, **{"systems.mem.inmemory.namespace": other}), store))
    finally:
        InMemoryBroker.drop(other)
    assert store.changelog_mapping() == {f"Partition {p}": p for p in range(8)}


async def _start_stop(config: Config, store: MemoryStore) -> None:
    coordinator = JobCoordinator(config, store=store)
    try:
        await coordinator.start()
    finally:
        await coordinator.stop()


def test_http_serves_the_model_locality_and_status_and_takes_reports(namespace: str) -> None:
    store = MemoryStore()

    async def go() -> None:
        coordinator = await started(job(namespace), store)
        url = coordinator.url
        try:
            status, body = await asyncio.to_thread(get, url + "/")
            assert status == 200
            model = JobModel.from_json(json.dumps(body))
            assert model == coordinator.job_model
            assert model.config["task.inputs"] == "mem.in"
            assert body["containers"]["1"]["tasks"]["Partition 3"]["system-stream-partitions"] == [
                {"system": "mem", "stream": "in", "partition": 3}
            ]
            report = ContainerReport("1", "host-a", "running", 7, ({"name": "Partition 1"},), pid=42)
            assert await asyncio.to_thread(put, url + "/containers/1/status", report.to_json()) == (
                200,
                {"ok": True, "control": {"seq": 0, "paused": False, "knobs": {}}},
            )
            status, body = await asyncio.to_thread(get, url + "/status")
            assert status == 200 and body["processed"] == 7
            assert body["containers"]["1"]["host"] == "host-a"
            assert body["containers"]["0"] == {"state": "unreported"}
            assert await asyncio.to_thread(get, url + "/locality") == (200, {"1": "host-a"})
            await asyncio.to_thread(eventually, lambda: store.container_hosts() == {"1": "host-a"})
        finally:
            await coordinator.stop()
        assert coordinator.job_status().reports["1"].processed == 7

    asyncio.run(go())


def test_a_retried_container_reports_again_after_failing_and_its_count_is_kept(namespace: str) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            coordinator.report(ContainerReport("0", "h", "running", 5, pid=1))
            coordinator.report(ContainerReport("0", "h", "failed", 7, (), "boom", pid=1))
            coordinator.report(ContainerReport("0", "h", "starting", 0, pid=2))
            coordinator.report(ContainerReport("0", "h", "running", 3, pid=2))
            status = coordinator.job_status()
            assert status.reports["0"].state == "running"
            assert status.processed == 10  # 7 of the failed attempt + 3 of the retry
            assert status.to_dict()["processed"] == 10
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_running_report_handled_after_the_final_one_of_its_process_is_ignored(namespace: str) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            coordinator.report(ContainerReport("0", "h", "running", 990, pid=7))
            coordinator.report(ContainerReport("0", "h", "stopped", 1000, pid=7))
            coordinator.report(ContainerReport("0", "h", "running", 995, pid=7))  # in flight before "stopped"
            status = coordinator.job_status()
            assert status.reports["0"].state == "stopped"
            assert status.processed == 1000
            assert status.to_dict()["processed"] == 1000
            # a second final report of the same process keeps its last count once
            coordinator.report(ContainerReport("0", "h", "stopped", 1000, pid=7))
            assert coordinator.job_status().processed == 1000
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_retry_from_a_new_process_adds_to_the_failed_attempt_and_stale_reports_are_ignored(
    namespace: str,
) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            coordinator.report(ContainerReport("0", "h", "failed", 400, (), "boom", pid=1))
            coordinator.report(ContainerReport("0", "h", "running", 100, pid=2))
            status = coordinator.job_status()
            assert status.reports["0"].state == "running" and status.reports["0"].pid == 2
            assert status.processed == 500
            # a late report of the ended first process changes nothing
            coordinator.report(ContainerReport("0", "h", "running", 390, pid=1))
            status = coordinator.job_status()
            assert status.reports["0"].pid == 2 and status.processed == 500
            coordinator.report(ContainerReport("0", "h", "stopped", 150, pid=2))
            assert coordinator.job_status().processed == 550
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_after_request_stop_every_report_is_answered_with_stop(namespace: str) -> None:
    from samza_nb.coordinator.client import send_report

    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            report = ContainerReport("1", "h", "running", 1, pid=9)
            assert await asyncio.to_thread(send_report, coordinator.url, report) is False
            coordinator.request_stop()
            assert coordinator.stop_requested
            assert await asyncio.to_thread(
                put, coordinator.url + "/containers/1/status", report.to_json()
            ) == (
                200,
                {"ok": True, "control": {"seq": 0, "paused": False, "knobs": {}}, "stop": True},
            )
            assert await asyncio.to_thread(send_report, coordinator.url, report) is True
        finally:
            await coordinator.stop()

    asyncio.run(go())


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "fragment"),
    [
        ("GET", "/nowhere", None, 404, "no such resource: /nowhere"),
        ("POST", "/", b"{}", 405, "POST is not allowed on /"),
        ("DELETE", "/status", None, 405, "DELETE is not allowed"),
        ("GET", "/containers/0/status", None, 405, "GET is not allowed"),
        ("PUT", "/containers/9/status", b"{}", 404, "no container '9' (containers: 0, 1)"),
        ("PUT", "/containers/0/status", b"not json", 400, "is not JSON"),
        ("PUT", "/containers/0/status", b"[1]", 400, "must be a JSON object"),
        (
            "PUT",
            "/containers/0/status",
            b'{"host":"h","state":"dancing","processed":1}',
            400,
            "state='dancing'",
        ),
        ("PUT", "/containers/0/status", b'{"host":"h","state":"running","processed":-1}', 400, "processed"),
        ("PUT", "/containers/0/status", b'{"state":"running","processed":1}', 400, "host is missing"),
    ],
)
def test_bad_requests_get_json_errors(
    namespace: str, method: str, path: str, body: bytes | None, status: int, fragment: str
) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            code, answer = await asyncio.to_thread(call, coordinator.url + path, method, body)
            assert code == status
            assert fragment in answer["error"]
            assert "Traceback" not in answer["error"]
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_configured_port_and_host_are_used(namespace: str) -> None:
    from samza_nb.runtime.dev_broker import free_port

    port = free_port()

    async def go() -> None:
        coordinator = await started(
            job(namespace, **{"cluster-manager.jobcoordinator.url.port": str(port)}), MemoryStore()
        )
        try:
            assert coordinator.url == f"http://127.0.0.1:{port}"
            assert (await asyncio.to_thread(get, coordinator.url + "/status"))[0] == 200
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_checkpoint_defaults_for_several_containers() -> None:
    from samza_nb.checkpoint.base import checkpoint_factory_path

    assert checkpoint_factory_path(Config({})).endswith("DuckDBCheckpointManagerFactory")
    assert checkpoint_factory_path(Config({"job.container.count": "2"})).endswith(
        "LogCheckpointManagerFactory"
    )
    duck = "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory"
    with pytest.raises(ConfigError, match=r"task.checkpoint.factory=.*job.container.count=2"):
        checkpoint_factory_path(Config({"job.container.count": "2", "task.checkpoint.factory": duck}))


def test_a_new_attempt_of_a_container_that_completed_its_work_is_told_to_stop(namespace: str) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            assert not coordinator.report(ContainerReport("0", "h", "running", 5, pid=1))
            # stopped on a signal or a stop request: not completed, a retry has work to do
            assert not coordinator.report(ContainerReport("1", "h", "stopped", 5, pid=3))
            assert not coordinator.report(ContainerReport("1", "h", "running", 0, pid=4))
            # ended by itself: a retry Spark started after losing its executor stops at once
            assert not coordinator.report(ContainerReport("0", "h", "stopped", 9, pid=1, completed=True))
            assert coordinator.report(ContainerReport("0", "h", "starting", 0, pid=2))
            assert coordinator.job_status().processed == 9 + 5  # container 0, container 1's first attempt
        finally:
            await coordinator.stop()

    asyncio.run(go())
