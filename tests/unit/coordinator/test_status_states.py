"""A container's report carries a ContainerState and says its RunOutcome; the JSON reads as the bare words."""

from __future__ import annotations

import json

import pytest

from samza_nb.coordinator.status import (
    CONTAINER_STATES,
    ContainerReport,
    JobStatus,
    StatusReportError,
)
from samza_nb.observe.states import ContainerState, RunOutcome


def test_the_reported_states_are_every_lifecycle_state_but_new() -> None:
    assert CONTAINER_STATES == ("starting", "running", "stopping", "stopped", "failed")
    assert ContainerState.NEW not in CONTAINER_STATES


def test_a_report_keeps_its_state_as_a_container_state_and_its_json_as_the_word() -> None:
    report = ContainerReport("0", "h", "running", 3, pid=7)  # type: ignore[arg-type]
    assert report.state is ContainerState.RUNNING
    body = report.to_json()
    assert body == (
        b'{"host":"h","state":"running","processed":3,"tasks":[],"error":null,"pid":7,"completed":false,'
        b'"control":0,"paused":false,"knobs":{},"refused":null}'
    )
    assert ContainerReport.from_json("0", body) == report


@pytest.mark.parametrize("state", ["new", "timed out", "finished", ""])
def test_a_state_a_container_does_not_report_is_refused_naming_it(state: str) -> None:
    with pytest.raises(StatusReportError, match=f"state={state!r} is not one of starting, running"):
        ContainerReport.from_json("0", json.dumps({"host": "h", "state": state, "processed": 0}).encode())


@pytest.mark.parametrize(
    ("state", "completed", "outcome"),
    [
        (ContainerState.STARTING, False, None),
        (ContainerState.RUNNING, False, None),
        (ContainerState.STOPPING, False, None),
        (ContainerState.STOPPED, False, RunOutcome.STOPPED),
        (ContainerState.STOPPED, True, RunOutcome.FINISHED),
        (ContainerState.FAILED, False, RunOutcome.FAILED),
    ],
)
def test_a_report_says_how_the_container_ended(
    state: ContainerState, completed: bool, outcome: RunOutcome | None
) -> None:
    report = ContainerReport("0", "h", state, 1, completed=completed)
    assert report.outcome is outcome
    assert report.final is (outcome is not None)


def test_the_job_status_json_names_an_unreported_container() -> None:
    status = JobStatus("j", ("0", "1"))
    status.take(ContainerReport("0", "h", ContainerState.FAILED, 2, error="boom", pid=1))
    data = json.loads(json.dumps(status.to_dict()))
    assert data["containers"]["0"]["state"] == "failed"
    assert data["containers"]["1"] == {"state": "unreported"}
    assert [report.container_id for report in status.failed()] == ["0"]


def test_a_failed_report_names_the_message_its_task_failed_on() -> None:
    report = ContainerReport(
        "1", "h", ContainerState.FAILED, 4, error="bad n", failed_at=("log", "pay", 1, "7")
    )
    assert json.loads(report.to_json())["failed-at"] == ["log", "pay", 1, "7"]
    assert ContainerReport.from_json("1", report.to_json()).failed_at == ("log", "pay", 1, "7")
    assert "failed-at" not in json.loads(ContainerReport("1", "h", ContainerState.RUNNING, 4).to_json())
    body = json.loads(report.to_json()) | {"failed-at": ["log", "pay", "1", "7"]}
    with pytest.raises(StatusReportError, match="failed-at must be \\[system, stream, partition, offset\\]"):
        ContainerReport.from_json("1", json.dumps(body).encode())


def test_a_report_carries_the_url_of_the_live_query_service() -> None:
    report = ContainerReport(
        "0", "h", ContainerState.RUNNING, 1, query_url="http://a:1", query_token="t", live_url="http://a:2"
    )
    assert ContainerReport.from_json("0", report.to_json()).live_url == "http://a:2"
