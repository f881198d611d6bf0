"""Is ``job.shared.dir`` really shared? The driver asks every executor before the job's work starts.

A ``job.shared.dir`` that a worker mounts elsewhere (or not at all) does not fail where it is set: the driver
writes the inputs there, a container on that worker finds nothing, and what follows (a container waiting for
an input, or a misleading "register the DataFrame earlier") hides the cause. So, when ``job.shared.dir`` is
set and the master is a cluster's:

- the driver writes a marker file (a fresh name each run) in the job's directory under ``job.shared.dir``
  (:meth:`SharedDirProbe.write`) and removes it when the runner ends (:meth:`SharedDirProbe.remove`);
- before the coordinator starts (before any input is written), one small Spark job of a task per task slot
  (Spark's scheduler spreads a round of offers over every executor) looks for it on each executor
  (:meth:`SharedDirProbe.check_executors`);
- each container's Spark task looks for it again before anything else (:func:`marker_check`, in the task's
  closure: an executor added later is checked too).

A missing marker is one ConfigError line naming ``job.shared.dir``, the directory and the worker's host,
which reaches the runner's caller (the CLI's exit, the Python API's exception, the notebook) within
seconds; :func:`shared_dir_error` finds that line in a failed Spark job's text.
"""

from __future__ import annotations

import contextlib
import logging
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.errors import ConfigError
from samza_nb.runtime.spark.cluster import is_local_master
from samza_nb.systems.spark.settings import SHARED_DIR_KEY, job_files_directory, shared_across_machines

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

NOT_SHARED: Final = f"{SHARED_DIR_KEY} is not shared with worker host"
"""How the one-line error of a worker that does not see the driver's marker starts."""


class SharedDirProbe:
    """The marker of one run of the Spark runner (see the module); ``marker`` is None when there is nothing
    to probe (a local master, or no ``job.shared.dir``)."""

    def __init__(self, config: Config, master: str) -> None:
        self.setting = (config.get_str(SHARED_DIR_KEY) or "").strip()
        self.marker: str | None = None
        if shared_across_machines(config) and not is_local_master(master):
            self.marker = str(job_files_directory(config) / f".shared-dir-probe-{uuid.uuid4().hex}")

    def write(self) -> None:
        """Write the marker (creating the job's directory under ``job.shared.dir``)."""
        if self.marker is None:
            return
        path = Path(self.marker)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("written by the driver: a worker that does not see this file does not share it\n")

    def remove(self) -> None:
        """Remove the marker (at the runner's end)."""
        if self.marker is not None:
            with contextlib.suppress(OSError):
                Path(self.marker).unlink(missing_ok=True)

    @property
    def check(self) -> Callable[[], None] | None:
        """What each container's Spark task runs first (:func:`marker_check`); None: nothing to probe."""
        return marker_check(self.marker, self.setting) if self.marker is not None else None

    def check_executors(self, context: Any, slots: int) -> None:
        """Run one task per slot (at least one) that looks for the marker on its executor and says what it
        found (a task that does not raise: Spark does not retry it): a ConfigError naming the first host that
        does not see it."""
        look = self.check
        if look is None:
            return
        tasks = max(1, slots)
        for found in context.parallelize(range(tasks), tasks).mapPartitions(_each(look)).collect():
            if found:
                raise ConfigError(found, key=SHARED_DIR_KEY)


def marker_check(marker: str, setting: str) -> Callable[[], None]:
    """A function that needs only the standard library (it runs in a Spark task's closure, before samza_nb
    is imported there): it raises a RuntimeError starting :data:`NOT_SHARED` when ``marker`` is not there."""
    not_shared = NOT_SHARED
    directory = os.path.dirname(marker)

    def look() -> None:
        import os as worker_os
        import socket

        if worker_os.path.exists(marker):
            return
        with contextlib.suppress(OSError):  # a listing revalidates a network file system's cached directory
            if worker_os.path.basename(marker) in worker_os.listdir(directory):
                return
        raise RuntimeError(
            f"{not_shared} {socket.gethostname()}: the driver's marker {marker} is not in {directory} there "
            f"({SHARED_DIR_KEY} = {setting}); mount the same directory at that path on every worker (and the "
            "driver), or set it to one they all share"
        )

    return look


def _each(look: Callable[[], None]) -> Callable[[Iterable[int]], Iterator[str]]:
    """The probe job's task: ``""`` when ``look`` passed on its executor, else its error's line."""

    def run(items: Iterable[int]) -> Iterator[str]:
        try:
            look()
        except RuntimeError as exc:
            yield str(exc)
        else:
            yield ""

    return run


def shared_dir_error(text: str) -> ConfigError | None:
    """The one-line ConfigError in a failed Spark job's ``text`` when a worker did not see the marker; None
    for any other failure."""
    for line in text.splitlines():
        if NOT_SHARED in line:
            return ConfigError(line[line.index(NOT_SHARED) :].strip(), key=SHARED_DIR_KEY)
    return None


__all__ = ["NOT_SHARED", "SharedDirProbe", "marker_check", "shared_dir_error"]
