"""What the Spark runner's tasks run on an executor: one container each, as a child process of the Python
worker (``python -m samza_nb container`` against the job coordinator on the driver).

A child process rather than the worker itself: Spark reuses its Python workers, so a container run inside
one would leave its signal handlers, threads and imported modules behind (a notebook's task module, once
imported, would shadow the next run's); and the container's process is what Spark's task waits on, so its
exit decides the task's. The child runs in its own session (the worker daemon's SIGHUP to its process group
does not reach it) and is killed (SIGKILL) when the worker dies (Linux; a lost executor's worker): it must
not commit then, since Spark already runs the task's retry elsewhere, which resumes from the last checkpoint
(a commit of the orphan after that would put its output in the log beside the retry's); what it wrote since
is deleted when the retry recovers. Like every container it stops when the coordinator stays unreachable for
``cluster-manager.container.coordinator.timeout.ms`` (the driver is gone).

The task returns ``(container id, "stopped")`` when its container exits 0 and raises
:class:`ContainerAttemptFailed` otherwise, which Spark retries up to ``spark.task.maxFailures``; its message
is ``container <id> failed: <its last error line> (<how it exited>)``, the line the driver reports. A
container failed by a bad message (exit status 3: a message an output cannot store) or by its config (exit
status 2: a task class its worker cannot import, a ``job.shared.dir`` it does not see) would fail again: its
task returns ``(container id, "failed: <that line>")`` instead, which Spark does not retry; the driver fails
the job with it at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.config import Config

from samza_nb.runtime.console import EXIT_BAD_MESSAGE, EXIT_CONFIG, PROG
from samza_nb.runtime.spark.ship import shipped_paths, spark_files_directory
from samza_nb.systems.spark.session import WORKER_PYTHON_FIX, WORKER_PYTHON_MISSING
from samza_nb.systems.spark.settings import READ_ONLY_INPUTS_ENV

URL_ENV, ID_ENV, TOKEN_ENV = "SAMZA_COORDINATOR_URL", "SAMZA_CONTAINER_ID", "SAMZA_COORDINATOR_TOKEN"
"""The container's environment as :mod:`samza_nb.coordinator.client` names it, and ``"stopped"`` as
:class:`~samza_nb.observe.states.ContainerState` does (a unit test keeps them equal): not imported from
there, which would load the coordinator and the container into every Python worker before it starts one
(~0.5 s of a container's launch)."""
STOPPED = "stopped"
ContainerTask = Callable[[Iterable[str]], Iterator[tuple[str, str]]]
FAILED_MARK = "failed: "
MAX_LINE_CHARS = 2000
"""A longer stderr line of a container is cut when kept as its last line."""


class ContainerAttemptFailed(RuntimeError):
    """A container exited non-zero: this attempt of its Spark task fails (Spark retries it)."""


def container_task(
    url: str,
    python_path: Sequence[str],
    cwd: str,
    *,
    token: str | None = None,
    shipped: Sequence[str] = (),
    check: Callable[[], None] | None = None,
    no_retry: str | None = None,
) -> ContainerTask:
    """The function of the containers' Spark job (``rdd.mapPartitions``): it runs each container id of its
    partition with :func:`run_container` under the worker's own Python (Spark's ``spark.pyspark.python`` /
    ``PYSPARK_PYTHON``; in the driver's working directory ``cwd`` where the worker has it, so relative paths
    of the config mean what they mean on the driver; with the coordinator's ``token``, when it needs one, in
    the container's environment). It is a closure that needs only the standard library to be unpickled
    (cloudpickle pickles it by value): it puts ``python_path`` (the driver's, for a notebook's task module)
    first on the worker's ``sys.path`` before it imports samza_nb, and a worker whose Python cannot import
    samza_nb fails with one line that names the fix (:data:`WORKER_PYTHON_MISSING`). The code the driver
    shipped (``shipped``: the names of this run's archives) comes after the driver's paths
    (:func:`~samza_nb.runtime.spark.ship.shipped_paths`). ``check`` (standard library only) runs first of
    all: what the worker must see before a container starts there (the driver's marker in
    ``job.shared.dir``, :mod:`.probes`). ``no_retry``: why a retried attempt must not run its containers
    (a job that starts tasks over with ``reset.offset``: a retry would start them over again, in another
    output generation than the other containers'); such an attempt reports each container failed with it,
    which fails the job at once."""
    driver_path = [p for p in python_path if p]
    archives = list(shipped)
    missing, fix, failed = WORKER_PYTHON_MISSING, WORKER_PYTHON_FIX, FAILED_MARK

    def run_partition(ids: Iterable[str]) -> Iterator[tuple[str, str]]:
        import sys as worker_sys

        if check is not None:
            check()
        if no_retry is not None:
            from pyspark import TaskContext

            context = TaskContext.get()
            if context is not None and context.attemptNumber() > 0:
                for cid in ids:
                    yield cid, f"{failed}container {cid} {no_retry}"
                return

        for entry in reversed(driver_path):
            if entry not in worker_sys.path:
                worker_sys.path.insert(0, entry)
        try:
            from samza_nb.runtime.spark import task as worker
        except ImportError as exc:
            raise RuntimeError(f"{missing} ({worker_sys.executable}: {exc}): {fix}") from None

        path = [*driver_path, *worker.shipped_paths(worker_sys.path, archives)]
        for cid in ids:
            yield worker.run_container(worker_sys.executable, url, cid, path, cwd, token=token)

    return run_partition


def run_container(
    executable: str,
    url: str,
    container_id: str,
    python_path: Sequence[str],
    cwd: str | None = None,
    *,
    token: str | None = None,
) -> tuple[str, str]:
    """Run container ``container_id`` as a child process until it exits (with the coordinator's ``token`` in
    ``SAMZA_COORDINATOR_TOKEN`` when given); its stderr lines go to this process' stderr, prefixed
    ``[container <id>]``. ``(id, "stopped")`` when it exited 0, else
    :class:`ContainerAttemptFailed` (see the module)."""
    env = dict(os.environ)
    env[URL_ENV] = url
    env[ID_ENV] = container_id
    env[READ_ONLY_INPUTS_ENV] = "1"  # the driver wrote the inputs: a container never starts Spark to
    env.pop(TOKEN_ENV, None)
    if token is not None:
        env[TOKEN_ENV] = token
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys([*python_path, *inherited]))
    parent = os.getpid()
    process = subprocess.Popen(
        [executable, "-m", "samza_nb", "container"],
        env=env,
        cwd=cwd if cwd is not None and os.path.isdir(cwd) else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=(lambda: _die_with_parent(parent)) if sys.platform == "linux" else None,
    )
    last = ""
    try:
        assert process.stderr is not None
        for raw in process.stderr:
            text = raw.decode(errors="replace").rstrip()
            if text:
                last = text[:MAX_LINE_CHARS]
                print(f"[container {container_id}] {last}", file=sys.stderr, flush=True)
        status = process.wait()
    except BaseException:  # interrupted: the container stops gracefully (commits) on SIGTERM
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        raise
    finally:
        if process.stderr is not None:
            process.stderr.close()
    if status == 0:
        return container_id, STOPPED  # a plain str: Spark collects it
    detail = (
        last.removeprefix(f"{PROG}: ").removeprefix(f"container {container_id}: ").removeprefix("error: ")
    )
    how = f"was killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}"
    what = f"{detail} ({how})" if detail else how
    if status in (EXIT_BAD_MESSAGE, EXIT_CONFIG):
        return container_id, f"{FAILED_MARK}{what}"  # not retried: the same message or config fails it again
    raise ContainerAttemptFailed(f"container {container_id} {FAILED_MARK}{what}")


def starting_over_streams(config: Config, model: JobModel) -> list[str]:
    """The inputs of ``model``'s tasks whose ``reset.offset`` starts their tasks over (not bootstrap
    streams, which are re-read into the state kept), as ``system.stream``, sorted (on the driver only)."""
    from samza_nb.container.offsets import OffsetSetting

    streams = {ssp.system_stream for task in model.tasks.values() for ssp in task.ssps}
    return sorted(
        f"{s.system}.{s.stream}"
        for s in streams
        if (setting := OffsetSetting.from_config(config, s)).reset and not setting.bootstrap
    )


def _die_with_parent(parent: int) -> None:
    """In the child before exec: SIGKILL when the worker that started it dies (Linux's PR_SET_PDEATHSIG: no
    commit by an orphan whose retry already runs, see the module);
    exit at once when it already died."""
    import ctypes

    pr_set_pdeathsig = 1
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(128 + signal.SIGKILL)


__all__ = [
    "ContainerAttemptFailed",
    "ContainerTask",
    "container_task",
    "run_container",
    "shipped_paths",
    "spark_files_directory",
]
