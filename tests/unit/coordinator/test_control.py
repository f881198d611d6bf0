"""The job coordinator's control state: pause, resume and live knobs asked of every container, handed out
in the answers to their reports, confirmed by their reports, steered over HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator

import pytest

from samza_nb import ConfigError
from samza_nb.coordinator.client import exchange_report, send_control
from samza_nb.coordinator.control import ControlState, JobControl
from samza_nb.coordinator.status import ContainerReport
from samza_nb.errors import JobTimeoutError, SamzaError
from samza_nb.systems.inmemory.system import InMemoryBroker

from .memory_store import MemoryStore
from .test_job_coordinator import call, job, started


@pytest.fixture
def namespace() -> Iterator[str]:
    name = f"jc-control-{uuid.uuid4().hex[:8]}"
    yield name
    InMemoryBroker.drop(name)


@pytest.fixture
def confirmations() -> Iterator[dict[str, tuple[int, bool]]]:
    yield {"0": (0, False), "1": (0, False)}


def test_each_change_gets_a_new_sequence_number_and_a_repeat_none(
    confirmations: dict[str, tuple[int, bool]],
) -> None:
    control = JobControl(lambda: confirmations)
    assert control.state == ControlState(0, False, {})
    assert control.pause().seq == 1
    assert control.pause().seq == 1
    assert control.set({"task.max.concurrency": 4}, {}) == {"task.max.concurrency": "4"}
    assert control.set(None, {"task_commit_ms": "50"}) == {
        "task.max.concurrency": "4",
        "task.commit.ms": "50",
    }
    assert control.state.seq == 3 and control.state.paused
    assert control.resume() == ControlState(4, False, {"task.max.concurrency": "4", "task.commit.ms": "50"})


def test_a_key_that_cannot_change_live_is_refused_at_the_coordinator_listing_the_live_keys(
    confirmations: dict[str, tuple[int, bool]],
) -> None:
    control = JobControl(lambda: confirmations)
    with pytest.raises(
        ConfigError, match=r"job\.name cannot change while the job runs.*task\.max\.concurrency"
    ):
        control.set({"job.name": "x"}, {})
    with pytest.raises(
        ConfigError, match=r"^unknown key task\.max\.concurency: did you mean task\.max\.concurrency\?"
    ):
        control.set({"task.max.concurency": "2"}, {})
    with pytest.raises(ConfigError, match="task.max.concurrency"):
        control.set({"task.max.concurrency": "many"}, {})
    assert control.state.seq == 0


def test_a_pause_waits_for_every_running_container_to_confirm_it(
    confirmations: dict[str, tuple[int, bool]],
) -> None:
    control = JobControl(lambda: confirmations)
    seq = control.pause().seq
    with pytest.raises(JobTimeoutError, match="containers 0, 1 did not confirm the pause"):
        control.wait_paused(0)
    confirmations["0"] = (seq, True)
    assert control.pending() == ["1"]
    waiter = threading.Thread(target=control.wait_paused, args=(30,))
    waiter.start()
    confirmations["1"] = (seq, True)
    control.reported()
    waiter.join(30)
    assert not waiter.is_alive()
    control.resume()
    with pytest.raises(SamzaError, match="resumed"):
        control.wait_paused(0)


def test_reports_get_the_control_state_and_post_control_steers_it(namespace: str) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        url = coordinator.url
        try:
            report = ContainerReport("0", "h", "running", 1, pid=9)
            answer = await asyncio.to_thread(exchange_report, url, report)
            assert answer.control == ControlState(0, False, {})
            body = json.dumps({"set": {"task.max.concurrency": "8"}}).encode()
            status, reply = await asyncio.to_thread(call, url + "/control", "POST", body)
            assert status == 200 and reply["control"]["knobs"] == {"task.max.concurrency": "8"}
            status, reply = await asyncio.to_thread(
                call, url + "/control", "POST", json.dumps({"set": {"job.name": "x"}}).encode()
            )
            assert status == 400 and "the live keys are" in reply["error"]
            status, reply = await asyncio.to_thread(  # what samza-nb control set sends
                call, url + "/control", "POST", json.dumps({"set": {"task.max.concurency": "2"}}).encode()
            )
            assert status == 400 and reply["error"].startswith(
                "unknown key task.max.concurency: did you mean task.max.concurrency?"
            )
            status, reply = await asyncio.to_thread(call, url + "/control", "POST", b'{"stop": true}')
            assert status == 400 and "unknown stop" in reply["error"]

            pause = {"pause": True, "timeout": 0}
            status, reply = await asyncio.to_thread(
                call, url + "/control", "POST", json.dumps(pause).encode()
            )
            assert status == 504 and "containers 0, 1 did not confirm" in reply["error"]
            answer = await asyncio.to_thread(exchange_report, url, report)
            assert answer.control == ControlState(2, True, {"task.max.concurrency": "8"})
            for cid in ("0", "1"):
                confirmed = ContainerReport(cid, "h", "running", 1, pid=9, control=2, paused=True)
                await asyncio.to_thread(exchange_report, url, confirmed)
            await asyncio.to_thread(coordinator.pause, 30)
            assert coordinator.paused_containers() == ["0", "1"]
            reply = await asyncio.to_thread(send_control, url, {"pause": False})
            assert reply["control"]["paused"] is False and reply["paused"] == []
            assert await asyncio.to_thread(call, url + "/control") == (200, reply["control"])
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_container_that_ended_is_not_waited_for(namespace: str) -> None:
    async def go() -> None:
        coordinator = await started(job(namespace), MemoryStore())
        try:
            coordinator.report(ContainerReport("0", "h", "stopped", 5, pid=1, completed=True))
            coordinator.request_pause()
            seq = coordinator.control_state().seq
            coordinator.report(ContainerReport("1", "h", "running", 3, pid=2, control=seq, paused=True))
            await asyncio.to_thread(coordinator.pause, 30)  # waiting for container 0 would time out: an error
            assert coordinator.paused_containers() == ["1"]
            assert coordinator.control_state().paused is True
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_change_is_waited_for_until_applied_and_a_refused_one_withdrawn(
    confirmations: dict[str, tuple[int, bool]],
) -> None:
    control = JobControl(lambda: confirmations)
    control.set({"task.max.concurrency": 4}, {})
    seq = control.set({"task.commit.ms": 50}, {}) and control.state.seq
    assert control.wait_applied(seq, 0) == ["0", "1"], "neither applied it yet"
    confirmations["0"] = (seq, False)
    waiter = threading.Thread(target=control.wait_applied, args=(seq, 30))
    waiter.start()
    confirmations["1"] = (seq, False)
    control.reported()
    waiter.join(30)
    assert not waiter.is_alive()
    assert control.withdraw({"task.commit.ms": None}).knobs == {"task.max.concurrency": "4"}
    assert control.withdraw({"task.max.concurrency": "2"}).knobs == {"task.max.concurrency": "2"}
