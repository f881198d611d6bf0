"""Commit and shutdown requests: the coordinator handed to one task call, and the container-wide tally."""

from __future__ import annotations

from collections.abc import Iterable

from samza_nb.api.task import RequestScope


class ReadableCoordinator:
    """The TaskCoordinator of one process/window/end-of-stream call: remembers its last commit and
    shutdown request (a second request of the same kind overwrites the first)."""

    __slots__ = ("commit_request", "requested", "shutdown_request", "task_name")

    def __init__(self, task_name: str) -> None:
        self.task_name = task_name
        self.commit_request: RequestScope | None = None
        self.shutdown_request: RequestScope | None = None
        self.requested = False

    def commit(self, scope: RequestScope) -> None:
        """Ask for a commit of this task (CURRENT_TASK) or of every task (ALL_TASKS_IN_CONTAINER)."""
        self.commit_request = _checked(scope)
        self.requested = True

    def shutdown(self, scope: RequestScope) -> None:
        """Vote to stop (CURRENT_TASK) or stop the container (ALL_TASKS_IN_CONTAINER)."""
        self.shutdown_request = _checked(scope)
        self.requested = True

    def reset(self) -> None:
        """Forget the requests (the coordinator is reused for the task's next inline call)."""
        self.commit_request = None
        self.shutdown_request = None
        self.requested = False

    def __repr__(self) -> str:
        return (
            f"ReadableCoordinator({self.task_name!r}, commit={self.commit_request}, "
            f"shutdown={self.shutdown_request})"
        )


def _checked(scope: RequestScope) -> RequestScope:
    if not isinstance(scope, RequestScope):
        from samza_nb.errors import SamzaError

        raise SamzaError(
            f"request scope must be RequestScope.CURRENT_TASK or RequestScope.ALL_TASKS_IN_CONTAINER, "
            f"got {scope!r}"
        )
    return scope


class CoordinatorRequests:
    """The container's tally of requests from released calls: which tasks must commit, which voted to
    stop, and whether the container must stop now."""

    __slots__ = ("_all_tasks", "commit_requests", "shutdown_now", "shutdown_votes")

    def __init__(self, task_names: Iterable[str]) -> None:
        self._all_tasks = frozenset(task_names)
        self.commit_requests: set[str] = set()
        self.shutdown_votes: set[str] = set()
        self.shutdown_now = False

    def update(self, coordinator: ReadableCoordinator) -> None:
        """Take in the requests of one released call."""
        if coordinator.commit_request is RequestScope.CURRENT_TASK:
            self.commit_requests.add(coordinator.task_name)
        elif coordinator.commit_request is RequestScope.ALL_TASKS_IN_CONTAINER:
            self.commit_requests.update(self._all_tasks)
        if coordinator.shutdown_request is RequestScope.CURRENT_TASK:
            self.vote_shutdown(coordinator.task_name)
        elif coordinator.shutdown_request is RequestScope.ALL_TASKS_IN_CONTAINER:
            self.shutdown_now = True

    def vote_shutdown(self, task_name: str) -> None:
        """Record ``task_name``'s vote; when every task voted, the container stops."""
        self.shutdown_votes.add(task_name)
        if self.shutdown_votes >= self._all_tasks:
            self.shutdown_now = True
