"""The client side of the job coordinator's HTTP service: a container fetches the job model and sends
status reports (learning whether to stop and the control state from the answers); ``samza-nb control``
sends control commands."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.job_model import JobModel
from samza_nb.coordinator.control import ControlState
from samza_nb.coordinator.status import ContainerReport
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    import urllib.error

REQUEST_TIMEOUT_S = 10.0
FIRST_PAUSE_S = 0.05
MAX_PAUSE_S = 1.0
TOKEN_ENV = "SAMZA_COORDINATOR_TOKEN"
"""The job's token for a coordinator bound to a non-loopback address (sent as a Bearer token when set)."""
URL_ENV = "SAMZA_COORDINATOR_URL"
ID_ENV = "SAMZA_CONTAINER_ID"
JOB_NAME_ENV = "SAMZA_JOB_NAME"
JOB_ID_ENV = "SAMZA_JOB_ID"
"""A container process's environment: its coordinator's URL, its id, and the job (``job.name``,
``job.id``) it belongs to (a served job model of another job is refused)."""


class CoordinatorUnreachable(SamzaError):
    """The job coordinator did not answer (connection refused, timeout) or answered with an error."""


def fetch_job_model(url: str, timeout_s: float) -> JobModel:
    """The job model (with the job's config) served at ``url``. While the coordinator is not (yet)
    reachable the request is retried with growing pauses for up to ``timeout_s``; then, or on an HTTP error
    or a body that is not a job model, a :class:`CoordinatorUnreachable` or SamzaError naming the URL."""
    deadline = time.monotonic() + timeout_s
    pause, attempts = FIRST_PAUSE_S, 0
    while True:
        attempts += 1
        try:
            body = _request(url.rstrip("/") + "/", None, "GET")
            break
        except CoordinatorUnreachable as exc:
            if exc.__cause__ is not None or time.monotonic() + pause > deadline:
                raise CoordinatorUnreachable(
                    f"could not fetch the job model from {url} (after {attempts} attempts): {exc}"
                ) from None
        time.sleep(pause)  # waiting for the coordinator to listen (a bounded retry, not synchronisation)
        pause = min(pause * 2, MAX_PAUSE_S)
    try:
        return JobModel.from_json(body)
    except SamzaError as exc:
        raise SamzaError(f"the answer of {url} is not a job model: {exc}") from None


@dataclass(frozen=True)
class ReportAnswer:
    """The coordinator's answer to a report: ``stop`` gracefully, and the ``control`` state the container
    should be in (None from a coordinator that sends none); ``fenced``: why the container must stop at once
    without committing (a newer driver took the job over)."""

    stop: bool
    control: ControlState | None = None
    fenced: str | None = None


def exchange_report(url: str, report: ContainerReport, timeout_s: float = REQUEST_TIMEOUT_S) -> ReportAnswer:
    """PUT ``report`` to ``<url>/containers/<id>/status``; the coordinator's :class:`ReportAnswer`. A
    CoordinatorUnreachable when that fails."""
    body = _request(
        f"{url.rstrip('/')}/containers/{report.container_id}/status", report.to_json(), "PUT", timeout_s
    )
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return ReportAnswer(False)
    if not isinstance(answer, dict):
        return ReportAnswer(False)
    fenced = answer.get("fenced")
    return ReportAnswer(
        answer.get("stop") is True,
        ControlState.from_dict(answer.get("control")),
        str(fenced) if fenced else None,
    )


def send_report(url: str, report: ContainerReport, timeout_s: float = REQUEST_TIMEOUT_S) -> bool:
    """PUT ``report`` to ``<url>/containers/<id>/status``; True when the coordinator answered that the
    container should stop gracefully (``"stop": true``). A CoordinatorUnreachable when that fails."""
    return exchange_report(url, report, timeout_s).stop


def send_control(
    url: str, command: Mapping[str, Any], timeout_s: float = REQUEST_TIMEOUT_S, token: str | None = None
) -> dict[str, Any]:
    """POST a control command to ``<url>/control`` (see :func:`samza_nb.coordinator.control.run_command`;
    with ``token``, else ``$SAMZA_COORDINATOR_TOKEN``); the coordinator's answer. A CoordinatorUnreachable
    naming the coordinator's error when it refuses the command or cannot be reached."""
    data = json.dumps(dict(command)).encode()
    body = _request(f"{url.rstrip('/')}/control", data, "POST", timeout_s, token)
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        raise CoordinatorUnreachable(f"the answer of {url}/control is not JSON: {body[:80]!r}") from None
    if not isinstance(answer, dict):
        raise CoordinatorUnreachable(f"the answer of {url}/control is not a JSON object: {body[:80]!r}")
    return answer


def _request(
    url: str, body: bytes | None, method: str, timeout_s: float = REQUEST_TIMEOUT_S, token: str | None = None
) -> bytes:
    """The response body of a 2xx answer. Not reachable: CoordinatorUnreachable without a cause (worth a
    retry); an HTTP error answer: CoordinatorUnreachable caused by it, naming its error text."""
    import urllib.error  # (urllib.request costs a few ms to import: only a process that asks pays it)
    import urllib.request

    headers = {"Content-Type": "application/json"} if body is not None else {}
    token = token or os.environ.get(TOKEN_ENV)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            data: bytes = response.read()
            return data
    except urllib.error.HTTPError as exc:
        detail = _error_text(exc)
        raise CoordinatorUnreachable(f"{method} {url} answered {exc.code}: {detail}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
        raise CoordinatorUnreachable(f"{method} {url} failed: {reason}") from None


def _error_text(exc: urllib.error.HTTPError) -> str:
    try:
        data = json.loads(exc.read())
        return str(data.get("error", data)) if isinstance(data, dict) else str(data)
    except (ValueError, RecursionError, OSError):
        return exc.reason if isinstance(exc.reason, str) else str(exc.reason)


__all__ = [
    "ID_ENV",
    "JOB_ID_ENV",
    "JOB_NAME_ENV",
    "TOKEN_ENV",
    "URL_ENV",
    "CoordinatorUnreachable",
    "ReportAnswer",
    "exchange_report",
    "fetch_job_model",
    "send_control",
    "send_report",
]
