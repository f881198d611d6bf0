"""The driver outlives a Spark job's containers: after the Spark job ended, the coordinator keeps serving
until every container it heard from reported its end or its process is gone (up to the coordinator
timeout), so nothing keeps running a container after the runner finished."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.coordinator.job_coordinator import JobCoordinator

log = logging.getLogger(__name__)

TIMEOUT_KEY = "cluster-manager.container.coordinator.timeout.ms"
"""How long the driver waits for the containers: to stop when asked, and to end after the Spark job."""


async def containers_gone(coordinator: JobCoordinator, job: str, interval_s: float) -> None:
    """Wait (up to the coordinator timeout) until every container that reported has reported its end or
    its process (on this host) is gone: the coordinator must outlive their last commit and report. ``job``:
    the job's name (for the warning when some are still running); ``interval_s``: how often it looks."""
    deadline = time.monotonic() + coordinator.config.value(TIMEOUT_KEY) / 1000
    host = socket.gethostname()
    while time.monotonic() < deadline:
        reports = coordinator.job_status().reports.values()
        running = [r for r in reports if not r.final and not (r.host == host and r.pid and not _alive(r.pid))]
        if not running:
            return
        await asyncio.sleep(interval_s)
    log.warning("job %s: containers still running after the Spark job ended", job)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat") as stat:  # a zombie has ended
        return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    return True


__all__ = ["TIMEOUT_KEY", "containers_gone"]
