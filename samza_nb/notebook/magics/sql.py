"""``%%samza_sql <store>``: DuckDB SQL over a store of the notebook's job, as a DataFrame.

A job of one container runs in the kernel: the store is read through the container
(``container.query_store(store, sql)``, awaited on a helper thread's loop while the kernel's loop is blocked
by the cell). A job of several containers (``job.container.count`` > 1, ``--runner spark``) keeps its stores
in its container processes, each in the state files of its task partitions
(``<job.logged.store.base.dir>/<job.name>-<job.id>/stores/partition-<n>.duckdb``). While it runs, its job
coordinator asks every container for its committed rows of the store (each reads them in a read
transaction of its own, on a thread of its own: its loop never waits) and the query runs over their union
(:mod:`samza_nb.coordinator.store_queries`); once the run ended, those files are opened read-only and the
store is the union of every partition's.

Either way the query sees the committed contents, as a relation named after the store with columns ``key``,
``value`` and ``partition``. The result is a pandas DataFrame when pandas is installed, else the result
itself (``columns`` and ``rows``). Before any of the job's tasks committed (and with no checkpoint to start
from) the committed contents are empty whatever the job did: that is said in one line instead of an empty
result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from samza_nb.container.event_loop import run_blocking
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.processes_job import ProcessesJob
from samza_nb.notebook.runs.spark_job import SparkNotebookJob
from samza_nb.notebook.runs.store_lookup import coordinator_of
from samza_nb.storage.duckdb.job_files import state_directory
from samza_nb.storage.sql.query import query_store

if TYPE_CHECKING:
    from samza_nb.container.container import SamzaContainer
    from samza_nb.notebook.runs.job import JobRun


def query(run: JobRun | None, store: str, sql: str) -> Any:
    """Run ``sql`` over ``store`` of ``run``'s job; every problem is one NotebookError line."""
    store = store.strip()
    if not store:
        raise NotebookError("samza_sql: name the store: %%samza_sql <store>, then the SQL in the cell")
    if not sql.strip():
        raise NotebookError(f"samza_sql: the cell has no SQL (e.g. SELECT * FROM {store} LIMIT 10)")
    if run is None:
        raise NotebookError("samza_sql: no job has run yet: %samza_run the job, then query its stores")
    several = isinstance(run.job, ProcessesJob | SparkNotebookJob)
    container = None if several else cast("SamzaContainer", run.job)  # a job in the kernel is its container
    committed = True
    try:
        if container is not None:
            result = run_blocking(container.query_store(store, sql))
            committed = committed_anything(container)
        elif not run.done:
            coordinator = coordinator_of(run, "samza_sql")
            assert coordinator is not None
            result = coordinator.queries.sql(store, sql)
            committed = coordinator.queries.committed_anything()
        else:
            result = _in_state_files(run, store, sql)
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"samza_sql: {exc}") from None
    except Exception as exc:  # DuckDB's own errors (syntax, unknown column) are the user's SQL mistakes
        text = " ".join(str(exc).split())
        raise NotebookError(f"samza_sql: {type(exc).__name__}: {text}") from None
    if not committed:
        commit_ms: int = run.job.config.value("task.commit.ms")
        timer = "" if commit_ms > 0 else ": no commit timer"
        wait = ", or wait for the next commit" if commit_ms > 0 else ""
        raise NotebookError(
            f"samza_sql: nothing committed yet (task.commit.ms = {commit_ms}{timer}): the store shows "
            f"committed contents; %samza_stop commits{wait}"
        )
    try:
        return result.to_pandas()
    except ImportError:  # without pandas, the result itself (it renders as a table too)
        return result


def _in_state_files(run: JobRun, store: str, sql: str) -> Any:
    """``sql`` over ``store`` in the state files the container processes of ``run``'s job committed."""
    name, config = run.view.job, run.job.config
    directory = state_directory(config)
    paths = sorted(directory.glob("partition-*.duckdb"))
    if not paths:
        raise NotebookError(
            f"samza_sql: job {name!r} left no state files in {directory}: its containers committed no "
            "store here (they run on other hosts, or stopped before their first commit)"
        )
    return query_store(paths, store, sql, config)


def committed_anything(container: SamzaContainer) -> bool:
    """True when some task of ``container`` has committed offsets: it committed in this run, or it started
    from a checkpoint (whose commit the stores' committed contents are as of)."""
    return any(
        partition.committed_offset is not None
        for task in container.status().tasks
        for partition in task.partitions
    )


__all__ = ["committed_anything", "query"]
