"""Pause, resume and live knobs for the runners whose containers run elsewhere (container processes, Spark
tasks): each call goes to the job coordinators, and every container learns it on its next status report
(within one ``cluster-manager.container.status.interval.ms``; see :mod:`samza_nb.coordinator.control`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.coordinator.job_coordinator import JobCoordinator


class CoordinatorSteering:
    """``pause`` / ``resume`` / ``set`` of a runner, delegated to the coordinators :meth:`_steered` names
    (every job of the run). Safe from any thread but the coordinators' HTTP threads."""

    def _steered(self) -> list[JobCoordinator]:
        """The coordinators of the run (a SamzaError when none has started yet)."""
        raise NotImplementedError

    def coordinators(self) -> list[JobCoordinator]:
        """The run's job coordinators (a SamzaError when none has started yet)."""
        return self._steered()

    def pause(self, timeout: float | None = None) -> None:
        """Ask every container to pause (no new message, in-flight ones complete, every task commits) and
        return once each one still running confirmed it; JobTimeoutError naming the others after
        ``timeout`` s (the pause stays asked). Idempotent."""
        coordinators = self._steered()
        deadline = None if timeout is None else time.monotonic() + timeout
        for coordinator in coordinators:
            coordinator.request_pause()
        for coordinator in coordinators:
            coordinator.pause(None if deadline is None else max(0.0, deadline - time.monotonic()))

    @property
    def paused(self) -> bool:
        """True while a pause is asked of the containers (they may still be quieting down)."""
        return any(coordinator.control_state().paused for coordinator in self._steered())

    def resume(self) -> None:
        """Ask every container to dispatch again (returns at once)."""
        for coordinator in self._steered():
            coordinator.resume()

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Ask every container to change live knobs (``task.max.concurrency``, ``task.commit.ms``,
        ``task.window.ms``, stream priorities, the batch size); any other key is a ConfigError listing the
        live keys. Waits a moment (``JobCoordinator.set``) for the running containers to apply it: a change
        one refuses is withdrawn and a ConfigError names the container and why. The knobs asked so far."""
        asked: dict[str, str] = {}
        for coordinator in self._steered():
            asked = coordinator.set(changes, **keywords)
        return asked


class SteeringOf(CoordinatorSteering):
    """:class:`CoordinatorSteering` of the coordinators ``coordinators()`` gives (a SamzaError from it when
    there are none yet)."""

    def __init__(self, coordinators: Callable[[], list[JobCoordinator]]) -> None:
        self._coordinators = coordinators

    def _steered(self) -> list[JobCoordinator]:
        return self._coordinators()


__all__ = ["CoordinatorSteering", "SteeringOf"]
