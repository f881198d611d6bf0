"""The words a run is described with: a container's lifecycle state and how a run ended.

Both are string enums: a member *is* its value (``ContainerState.RUNNING == "running"``, ``str()`` and
f-strings give the value, JSON writes it as the plain string), so what the job coordinator serves over
HTTP and what the notebook shows read exactly as the bare words did. The container, the job coordinator
(what containers report, and a container's outcome), the runners and the notebook (a run's outcome, the
dashboard) all name them from here.
"""

from __future__ import annotations

import enum


class ContainerState(enum.StrEnum):
    """Lifecycle of a container; each state is entered once, in this order (FAILED ends it early). A
    container reports every state but NEW to its job coordinator; STOPPED and FAILED are final."""

    NEW = "new"
    STARTING = "starting"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    FAILED = "failed"

    @property
    def final(self) -> bool:
        """True for STOPPED and FAILED: the container's run is over."""
        return self in (ContainerState.STOPPED, ContainerState.FAILED)


class RunOutcome(enum.StrEnum):
    """How a run (of a job, or of one container) ended.

    FINISHED: it ended by itself (every input reached end-of-stream, or the tasks asked to stop);
    STOPPED: a graceful stop was asked for (``%samza_stop``, the Stop button, a coordinator's request, a
    signal); TIMED_OUT and INTERRUPTED: a graceful stop after the run's timeout or on an interrupt;
    CANCELLED: cancelled without a final commit; FAILED: it raised (the error says why).
    """

    FINISHED = "finished"
    STOPPED = "stopped"
    TIMED_OUT = "timed out"
    INTERRUPTED = "interrupted"
    CANCELLED = "cancelled"
    FAILED = "failed"


__all__ = ["ContainerState", "RunOutcome"]
