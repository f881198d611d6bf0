"""What a container reports to the job coordinator (host, state, progress), and the job's status view."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samza_nb.errors import SamzaError
from samza_nb.observe.states import ContainerState, RunOutcome

CONTAINER_STATES: tuple[ContainerState, ...] = tuple(s for s in ContainerState if s is not ContainerState.NEW)
"""States a container reports (each compares equal to its JSON string); STOPPED and FAILED are final."""

UNREPORTED = "unreported"
"""What :meth:`JobStatus.to_dict` says of a container that has not reported yet (not a state a container
reports)."""


class StatusReportError(SamzaError):
    """A container's status report is not valid JSON of the expected shape (names the field)."""


@dataclass(frozen=True)
class ContainerReport:
    """One container's latest report: where it runs, its lifecycle state, messages processed so far, its
    tasks (one JSON object each, with at least ``name``), and the error that ended it, if any.
    ``completed``: a STOPPED container ended by itself (its tasks finished or asked to shut down), not
    on a stop request or a signal: its work is done, and a later attempt of it has nothing to do (its
    :attr:`outcome` is FINISHED). ``control``: the sequence number of the coordinator's control state it
    applied last (:mod:`samza_nb.coordinator.control`), ``paused``: whether it is paused (quiet),
    ``knobs``: its live knobs' values after the last change it applied (empty before any), ``refused``: why
    it refused the last control state it got (None when it applied it). ``query_url`` and ``query_token``:
    where the coordinator asks the container about its stores (:mod:`samza_nb.container.queries.server`);
    the token never leaves the coordinator (not in :meth:`JobStatus.to_dict`); ``live_url``: where it
    answers live lookups and its event time on its own loop (:mod:`samza_nb.container.queries.loop_server`,
    the same token). ``failed_at``: the message a
    task of a FAILED container failed on (system, stream, partition, offset), when one was."""

    container_id: str
    host: str
    state: ContainerState
    processed: int
    tasks: tuple[Mapping[str, Any], ...] = ()
    error: str | None = None
    pid: int | None = None
    completed: bool = False
    control: int = 0
    paused: bool = False
    knobs: Mapping[str, str] = field(default_factory=dict)
    refused: str | None = None
    query_url: str | None = None
    query_token: str | None = None
    failed_at: tuple[str, str, int, str] | None = None
    live_url: str | None = None

    def __post_init__(self) -> None:
        # ``state`` may be given as its string (as it arrives in JSON): it is kept as the ContainerState.
        state: object = self.state
        if state not in CONTAINER_STATES:
            raise StatusReportError(
                f"status of container {self.container_id!r}: state={state!r} is not one of "
                f"{', '.join(CONTAINER_STATES)}"
            )
        object.__setattr__(self, "state", ContainerState(self.state))

    @property
    def final(self) -> bool:
        """True once the container stopped or failed."""
        return self.state.final

    @property
    def outcome(self) -> RunOutcome | None:
        """How the container's run ended: FAILED, FINISHED (stopped by itself: ``completed``) or STOPPED
        (asked to); None while it runs."""
        if self.state is ContainerState.FAILED:
            return RunOutcome.FAILED
        if self.state is ContainerState.STOPPED:
            return RunOutcome.FINISHED if self.completed else RunOutcome.STOPPED
        return None

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (the container id is in the URL, not the body)."""
        return (
            {
                "host": self.host,
                "state": self.state,
                "processed": self.processed,
                "tasks": [dict(task) for task in self.tasks],
                "error": self.error,
                "pid": self.pid,
                "completed": self.completed,
                "control": self.control,
                "paused": self.paused,
                "knobs": dict(self.knobs),
                "refused": self.refused,
            }
            | ({"query-url": self.query_url, "query-token": self.query_token} if self.query_url else {})
            | ({"query-live-url": self.live_url} if self.live_url else {})
            | ({"failed-at": list(self.failed_at)} if self.failed_at else {})
        )

    def to_json(self) -> bytes:
        """The request body a container sends."""
        return json.dumps(self.to_dict(), separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, container_id: str, body: bytes) -> ContainerReport:
        """Parse a request body; a StatusReportError naming the bad field otherwise."""
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise StatusReportError(f"status of container {container_id!r} is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise StatusReportError(f"status of container {container_id!r} must be a JSON object")
        host = _field(data, "host", str, container_id)
        state = _field(data, "state", str, container_id)
        processed = _field(data, "processed", int, container_id)
        if isinstance(processed, bool) or processed < 0:
            raise StatusReportError(
                f"status of container {container_id!r}: processed must be an integer >= 0"
            )
        tasks = data.get("tasks", [])
        if not isinstance(tasks, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in tasks
        ):
            raise StatusReportError(
                f"status of container {container_id!r}: tasks must be a list of objects with a name"
            )
        error = data.get("error")
        if error is not None and not isinstance(error, str):
            raise StatusReportError(f"status of container {container_id!r}: error must be a string or null")
        pid = data.get("pid")
        if pid is not None and (not isinstance(pid, int) or isinstance(pid, bool)):
            raise StatusReportError(f"status of container {container_id!r}: pid must be an integer or null")
        completed = data.get("completed", False)
        if not isinstance(completed, bool):
            raise StatusReportError(f"status of container {container_id!r}: completed must be a boolean")
        control = data.get("control", 0)
        if not isinstance(control, int) or isinstance(control, bool) or control < 0:
            raise StatusReportError(f"status of container {container_id!r}: control must be an integer >= 0")
        paused = data.get("paused", False)
        if not isinstance(paused, bool):
            raise StatusReportError(f"status of container {container_id!r}: paused must be a boolean")
        values = data.get("knobs", {})
        if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
            raise StatusReportError(
                f"status of container {container_id!r}: knobs must be an object of strings"
            )
        refused = data.get("refused")
        if refused is not None and not isinstance(refused, str):
            raise StatusReportError(f"status of container {container_id!r}: refused must be a string or null")
        query_url, query_token = data.get("query-url"), data.get("query-token")
        live_url = data.get("query-live-url")
        if not all(isinstance(v, str | None) for v in (query_url, query_token, live_url)):
            raise StatusReportError(
                f"status of container {container_id!r}: query-url/-token/-live-url must be strings"
            )
        failed_at = data.get("failed-at")
        if failed_at is not None and not (
            isinstance(failed_at, list)
            and [type(v) for v in failed_at] == [str, str, int, str]
            and failed_at[2] >= 0
        ):
            raise StatusReportError(
                f"status of container {container_id!r}: failed-at must be [system, stream, partition, offset]"
            )
        return cls(
            container_id,
            host,
            state,
            processed,
            tuple(tasks),
            error,
            pid,
            completed,
            control,
            paused,
            values,
            refused,
            query_url,
            query_token,
            None if failed_at is None else (failed_at[0], failed_at[1], failed_at[2], failed_at[3]),
            live_url,
        )


def _field(data: Mapping[str, Any], name: str, kind: type, container_id: str) -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        raise StatusReportError(
            f"status of container {container_id!r}: {name} is missing or not a {kind.__name__} "
            f"(got {value!r})"
        )
    return value


@dataclass
class JobStatus:
    """The coordinator's view of every container: the latest report of each (or none yet), and what
    earlier attempts of a container processed (a container retried by the Spark runner starts a new process
    that counts from 0; ``earlier`` keeps the sum of the last count of each attempt before it). ``ended``
    holds, per container, the pids whose attempt is over (see :meth:`take`)."""

    job: str
    containers: tuple[str, ...]
    reports: dict[str, ContainerReport] = field(default_factory=dict)
    earlier: dict[str, int] = field(default_factory=dict)
    ended: dict[str, set[int]] = field(default_factory=dict)

    def take(self, report: ContainerReport) -> bool:
        """Apply ``report``; False when it is ignored. A final report ends its process' attempt: a later
        non-final report of the same pid (sent before it, handled after) is ignored, a later final one
        replaces it (its last count). A report from another pid starts a new attempt: the previous report's
        count moves to ``earlier`` and its pid is ended; reports of an ended pid are ignored from then on.
        Without a pid, a report after a final one starts a new attempt."""
        cid = report.container_id
        previous = self.reports.get(cid)
        ended = self.ended.setdefault(cid, set())
        if report.pid is not None and report.pid in ended:
            return False
        if previous is not None and previous.final and report.pid is not None and report.pid == previous.pid:
            if not report.final:
                return False
        elif previous is not None and (previous.final or previous.pid != report.pid):
            self.earlier[cid] = self.earlier.get(cid, 0) + previous.processed
            if previous.pid is not None:
                ended.add(previous.pid)
        self.reports[cid] = report
        return True

    def copy(self) -> JobStatus:
        """A snapshot that later reports do not change."""
        return JobStatus(
            self.job,
            self.containers,
            dict(self.reports),
            dict(self.earlier),
            {cid: set(pids) for cid, pids in self.ended.items()},
        )

    @property
    def processed(self) -> int:
        """Messages processed by all containers (every attempt of each), as last reported."""
        return sum(report.processed for report in self.reports.values()) + sum(self.earlier.values())

    def failed(self) -> list[ContainerReport]:
        """Reports of containers that failed."""
        return [report for report in self.reports.values() if report.state is ContainerState.FAILED]

    def to_dict(self) -> dict[str, Any]:
        """``{"job", "processed", "containers": {id: report or {"state": "unreported"}}}`` (a state is
        its plain string in JSON)."""
        return {
            "job": self.job,
            "processed": self.processed,
            "containers": {
                cid: _public(self.reports[cid]) if cid in self.reports else {"state": UNREPORTED}
                for cid in self.containers
            },
        }


def _public(report: ContainerReport) -> dict[str, Any]:
    """A report as anyone who may read the job's status sees it: without the container's query token."""
    data = report.to_dict()
    data.pop("query-token", None)
    return data


__all__ = ["CONTAINER_STATES", "UNREPORTED", "ContainerReport", "JobStatus", "StatusReportError"]
