"""Ports of Samza's TestCoordinatorRequests, plus the coordinator's own rules."""

from __future__ import annotations

import pytest

from samza_nb import RequestScope, SamzaError
from samza_nb.container.loop.coordination import CoordinatorRequests, ReadableCoordinator


def coordinator(task: str, commit: RequestScope | None = None, shutdown: RequestScope | None = None):
    c = ReadableCoordinator(task)
    if commit is not None:
        c.commit(commit)
    if shutdown is not None:
        c.shutdown(shutdown)
    return c


def test_commit_requests_collect_per_task_and_for_all() -> None:
    requests = CoordinatorRequests(["a", "b", "c"])
    requests.update(coordinator("a", commit=RequestScope.CURRENT_TASK))
    assert requests.commit_requests == {"a"}
    requests.update(coordinator("c", commit=RequestScope.CURRENT_TASK))
    assert requests.commit_requests == {"a", "c"}
    requests.update(coordinator("c", commit=RequestScope.ALL_TASKS_IN_CONTAINER))
    assert requests.commit_requests == {"a", "b", "c"}


def test_shutdown_needs_every_task_to_vote() -> None:
    requests = CoordinatorRequests(["a", "b", "c"])
    requests.update(coordinator("a", shutdown=RequestScope.CURRENT_TASK))
    assert not requests.shutdown_now
    requests.update(coordinator("b", shutdown=RequestScope.CURRENT_TASK))
    assert not requests.shutdown_now
    requests.update(coordinator("b", shutdown=RequestScope.CURRENT_TASK))
    assert not requests.shutdown_now
    requests.update(coordinator("c", shutdown=RequestScope.CURRENT_TASK))
    assert requests.shutdown_now


def test_shutdown_all_stops_now() -> None:
    requests = CoordinatorRequests(["a", "b", "c"])
    requests.update(coordinator("a", shutdown=RequestScope.ALL_TASKS_IN_CONTAINER))
    assert requests.shutdown_now


def test_a_second_request_of_the_same_kind_overwrites_the_first() -> None:
    c = ReadableCoordinator("a")
    c.commit(RequestScope.ALL_TASKS_IN_CONTAINER)
    c.commit(RequestScope.CURRENT_TASK)
    c.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)
    c.shutdown(RequestScope.CURRENT_TASK)
    requests = CoordinatorRequests(["a", "b"])
    requests.update(c)
    assert requests.commit_requests == {"a"}
    assert not requests.shutdown_now


def test_a_scope_that_is_not_a_request_scope_is_refused() -> None:
    with pytest.raises(SamzaError, match="RequestScope"):
        ReadableCoordinator("a").commit("current")  # type: ignore[arg-type]
