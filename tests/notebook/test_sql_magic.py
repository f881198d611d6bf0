"""%%samza_sql <store>: DuckDB SQL over a store of the notebook's job, as a DataFrame."""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually
from tests.requirements import require

from .helpers import config_cell, error_line, run

COUNTER = """%%samza_task
class Counter:
    def init(self, context):
        self.counts = context.get_store("counts")
    def process(self, envelope, collector, coordinator):
        for word in envelope.message.split():
            self.counts.put(word, (self.counts.get(word) or 0) + 1)
"""


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%samza_sql\nSELECT 1\n", "name the store: %%samza_sql <store>"),
        ("%%samza_sql counts\n\n", "the cell has no SQL (e.g. SELECT * FROM counts LIMIT 10)"),
        ("%%samza_sql counts\nSELECT * FROM counts\n", "no job has run yet"),
    ],
)
def test_mistakes_are_one_line(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str], cell: str, message: str
) -> None:
    assert message in error_line(run(shell, cell), capsys)


def store_config(broker: InMemoryBroker, job: str) -> str:
    return config_cell(broker, "lines", job=job) + (
        "stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory\n"
        "stores.counts.key.serde = string\nstores.counts.msg.serde = int\ntask.commit.ms = 50\n"
    )


def assert_query_mistakes_are_one_line(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    """A store the job does not have, and SQL that does not parse, are one line each from the real query
    path (DuckDB's parser error wrapped as a SamzaError), not a traceback."""
    assert "no store 'ghost'" in error_line(run(shell, "%%samza_sql ghost\nSELECT 1\n"), capsys)
    error = error_line(run(shell, "%%samza_sql counts\nnonsense\n"), capsys)
    assert error.startswith("NotebookError: ") and "query on store 'counts' does not parse" in error, error
    assert error.endswith('syntax error at or near "nonsense" (LINE 1: nonsense)'), error
    error = error_line(run(shell, "%%samza_sql counts\nSELECT nope FROM counts\n"), capsys)
    assert "query on store 'counts' failed: Binder Error: " in error and '"nope"' in error, error


def test_sql_over_the_store_of_a_running_job(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    require("pandas", "DataFrames need pandas (samza_nb[notebook])")
    broker.create_stream("lines", 2)
    for i, line in enumerate(["a b a", "b c", "a"]):
        broker.send("lines", line, partition=i % 2)
    run(shell, store_config(broker, "live-sql"))
    run(shell, COUNTER)
    assert run(shell, "%samza_run").success  # no loop runs here: the job runs on its own thread
    try:
        eventually(
            lambda: (
                magics.session.view
                and magics.session.view.processed == 3
                and magics.session.view.commit_count >= 4
            ),
            timeout=10,
            message="3 messages processed and 4 commits",
        )
        frame = shell.run_cell_magic(
            "samza_sql", "counts", "SELECT key, sum(value) AS n FROM counts GROUP BY key ORDER BY key"
        )
        assert frame.to_dict("records") == [{"key": "a", "n": 3}, {"key": "b", "n": 2}, {"key": "c", "n": 1}]
        assert_query_mistakes_are_one_line(shell, capsys)
    finally:
        run(shell, "%samza_stop")


def test_sql_over_a_duckdb_store_of_a_finished_job(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    require("pandas", "DataFrames need pandas (samza_nb[notebook])")
    broker.create_stream("lines", 2)
    for i, line in enumerate(["a b a", "b c", "a"]):
        broker.send("lines", line, partition=i % 2)
    broker.end_stream("lines")
    run(shell, store_config(broker, "sqljob"))
    run(shell, COUNTER)
    assert run(shell, "%samza_run --wait").success
    frame = shell.run_cell_magic(
        "samza_sql", "counts", "SELECT key, sum(value) AS n FROM counts GROUP BY key ORDER BY key"
    )
    assert frame.to_dict("records") == [{"key": "a", "n": 3}, {"key": "b", "n": 2}, {"key": "c", "n": 1}]
    assert_query_mistakes_are_one_line(shell, capsys)


def test_sql_before_the_first_commit_says_nothing_is_committed_yet(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    require("pandas", "DataFrames need pandas (samza_nb[notebook])")
    broker.create_stream("lines", 2)
    for i, line in enumerate(["a b a", "b c", "a"]):
        broker.send("lines", line, partition=i % 2)
    config = store_config(broker, "uncommitted").replace("task.commit.ms = 50\n", "")  # the default, 60 s
    run(shell, config)
    run(shell, COUNTER)
    assert run(shell, "%samza_run").success
    try:
        eventually(
            lambda: magics.session.view and magics.session.view.processed == 3,
            timeout=10,
            message="3 messages processed",
        )
        capsys.readouterr()
        result = run(shell, "%%samza_sql counts\nSELECT key, sum(value) AS n FROM counts GROUP BY key\n")
        assert error_line(result, capsys) == (
            "NotebookError: samza_sql: nothing committed yet (task.commit.ms = 60000): the store shows "
            "committed contents; %samza_stop commits, or wait for the next commit"
        )
    finally:
        run(shell, "%samza_stop")
    frame = shell.run_cell_magic(
        "samza_sql", "counts", "SELECT key, sum(value) AS n FROM counts GROUP BY key ORDER BY key"
    )
    assert frame.to_dict("records") == [{"key": "a", "n": 3}, {"key": "b", "n": 2}, {"key": "c", "n": 1}]


def test_get_reads_a_live_and_a_committed_value_of_a_job_in_the_kernel(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    broker.create_stream("lines", 2)
    for i, line in enumerate(["a b a", "b c", "a"]):
        broker.send("lines", line, partition=i % 2)
    config = store_config(broker, "lookups").replace("task.commit.ms = 50\n", "")  # the default, 60 s
    run(shell, config)
    run(shell, COUNTER)
    assert run(shell, "%samza_run").success
    try:
        eventually(lambda: magics.session.view and magics.session.view.processed == 3, timeout=10)
        capsys.readouterr()
        assert run(shell, "%samza_get counts a").success
        live = "counts['a'] = 3 (live; container 0, task 'Partition 0', partition 0)\n"
        assert capsys.readouterr().out == live
        assert run(shell, "%samza_get counts c --committed").success  # nothing committed yet
        assert capsys.readouterr().out.startswith("counts['c']: no such key (committed; searched partitions")
        handle = magics.session.job()
        assert (handle.get("counts", "c").value, handle.get("counts", "c").partition) == (1, 1)
        assert handle.coordinator_url is None  # a job in the kernel has no coordinator
        handle.pause()  # commits
        assert handle.get("counts", "a", committed=True).value == 3
        handle.resume()
    finally:
        run(shell, "%samza_stop")
    assert error_line(run(shell, "%samza_get counts a"), capsys) == (
        "NotebookError: samza_get: job 'lookups' has ended (stopped): %%samza_sql counts reads the stores it "
        "committed"
    )
