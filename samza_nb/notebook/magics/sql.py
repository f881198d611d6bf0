"""``%%samza_sql <store>``: DuckDB SQL over a store of the notebook's job, as a DataFrame.

The store is read through the job's container (``container.query_store(store, sql)``, awaited when it is a
coroutine, on a helper thread's loop while the kernel's loop is blocked by the cell): its committed contents,
as a relation named after the store with columns ``key``, ``value`` and ``partition``. The result
is a pandas DataFrame when pandas is installed, else the container's result (``columns`` and ``rows``).
Before any of the job's tasks committed (and with no checkpoint to start from) the committed contents are
empty whatever the job did: that is said in one line instead of an empty result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samza_nb.container.event_loop import run_blocking
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError

if TYPE_CHECKING:
    from samza_nb.container.container import SamzaContainer


def query(container: SamzaContainer | None, store: str, sql: str) -> Any:
    """Run ``sql`` over ``store`` of ``container``'s job; every problem is one NotebookError line."""
    store = store.strip()
    if not store:
        raise NotebookError("samza_sql: name the store: %%samza_sql <store>, then the SQL in the cell")
    if not sql.strip():
        raise NotebookError(f"samza_sql: the cell has no SQL (e.g. SELECT * FROM {store} LIMIT 10)")
    if container is None:
        raise NotebookError("samza_sql: no job has run yet: %samza_run the job, then query its stores")
    try:
        result = run_blocking(container.query_store(store, sql))
    except SamzaError as exc:
        raise NotebookError(f"samza_sql: {exc}") from None
    except Exception as exc:  # DuckDB's own errors (syntax, unknown column) are the user's SQL mistakes
        text = " ".join(str(exc).split())
        raise NotebookError(f"samza_sql: {type(exc).__name__}: {text}") from None
    if not committed_anything(container):
        commit_ms: int = container.config.value("task.commit.ms")
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


def committed_anything(container: SamzaContainer) -> bool:
    """True when some task of ``container`` has committed offsets: it committed in this run, or it started
    from a checkpoint (whose commit the stores' committed contents are as of)."""
    return any(
        partition.committed_offset is not None
        for task in container.status().tasks
        for partition in task.partitions
    )


__all__ = ["committed_anything", "query"]
