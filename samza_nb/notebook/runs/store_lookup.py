"""Looking into the stores of a running notebook job: a key's value (``%samza_get``, ``job.get``) and the
address of its coordinator's ``/stores`` endpoints (``job.coordinator_url``).

A job of one container runs in the kernel: its stores are read through the container itself
(:class:`~samza_nb.container.queries.StoreReader`). A job of several containers (processes, Spark) is asked
through its job coordinator, which routes a lookup to the container that owns the key's partition
(:mod:`samza_nb.coordinator.store_queries`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samza_nb.container.container import SamzaContainer
from samza_nb.container.queries import KeyAnswer, StoreReader
from samza_nb.coordinator.store_queries import key_of_text
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.processes_job import ProcessesJob
from samza_nb.notebook.runs.spark_job import SparkNotebookJob

if TYPE_CHECKING:
    from samza_nb.coordinator.job_coordinator import JobCoordinator
    from samza_nb.notebook.runs.job import JobRun


def coordinator_of(run: JobRun, what: str) -> JobCoordinator | None:
    """The job coordinator of ``run`` (a job of several containers) once it started; None for a job of
    one container in the kernel. A NotebookError naming ``what`` before it started."""
    job = run.job
    if not isinstance(job, ProcessesJob | SparkNotebookJob):
        return None
    try:
        return job.steering().coordinators()[0]
    except (SamzaError, IndexError):
        raise NotebookError(
            f"{what}: job {run.view.job!r} has not started its job coordinator yet: run it again in a moment"
        ) from None


def lookup(run: JobRun, store: str, key: Any, *, committed: bool = False, what: str = "get") -> KeyAnswer:
    """``key`` in ``store`` of the running job ``run``: its live value, or ``committed`` its value as of the
    last commit (see the module); every problem is one NotebookError line naming ``what``."""
    if run.done:
        raise NotebookError(
            f"{what}: job {run.view.job!r} has ended ({run.outcome}): %%samza_sql {store} reads the "
            "stores it committed"
        )
    try:
        coordinator = coordinator_of(run, what)
        if coordinator is not None:
            return coordinator.queries.get(store, key, committed=committed)
        job = run.job
        assert isinstance(job, SamzaContainer)  # a job in the kernel is its container
        return StoreReader(job).get(store, key, committed=committed)
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"{what}: {exc}") from None


def lookup_text(run: JobRun, store: str, text: str, *, committed: bool = False) -> KeyAnswer:
    """:func:`lookup` of a key typed as text (``%samza_get``), read as the store's key serde reads it."""
    try:
        key = key_of_text(run.job.config, store, text)
    except SamzaError as exc:
        raise NotebookError(f"samza_get: {exc}") from None
    return lookup(run, store, key, committed=committed, what="samza_get")


__all__ = ["coordinator_of", "lookup", "lookup_text"]
