"""``%samza_clean``: the notebook's ``samza-nb clean``. An old Spark output generation stays behind after a
``%samza_checkpoints --reset`` and a rerun; ``%samza_clean --dry-run`` lists it, ``%samza_clean`` removes it
and keeps the current one; a running job is refused in one line; ``--all`` removes the current one too."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker

from .helpers import config_cell, error_line, fill, run

SEND = (
    "%%samza_task\nfrom samza_nb import OutgoingMessageEnvelope, SystemStream\n\nclass Send:\n"
    "    def process(self, envelope, collector, coordinator):\n"
    "        collector.send(OutgoingMessageEnvelope(SystemStream('spark', 'out'), {'n': envelope.message}))\n"
)


def rows(output: Path) -> list[int]:
    """What a plain reader of the stream's directory sees: every parquet file under it (all generations)."""
    return sorted(n for (n,) in duckdb.sql(f"select n from read_parquet('{output}/**/*.parquet')").fetchall())


def test_clean_removes_the_old_generation_refuses_a_running_job_and_all_removes_the_rest(
    shell: InteractiveShell,
    magics: SamzaMagics,
    broker: InMemoryBroker,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fill(broker, "in", 1, 20)
    spark = {"systems_spark_samza_factory": "samza_nb.systems.spark.SparkSystemFactory"}
    run(shell, config_cell(broker, "in", job="tidy", job_logged_store_base_dir=tmp_path, **spark))
    run(shell, SEND)
    run(shell, "%samza_run --wait --no-dashboard")
    run(shell, "%samza_checkpoints --reset")
    run(shell, "%samza_run --wait --no-dashboard")
    output = tmp_path / "tidy-1" / "spark-output" / "out"
    assert rows(output) == sorted(list(range(20)) * 2), "left behind: the first generation's rows"
    capsys.readouterr()

    run(shell, "%samza_clean --dry-run")
    listed = capsys.readouterr().out.strip().splitlines()
    assert "would remove" in listed[0] and any("old output generations" in line for line in listed), listed
    assert rows(output) == sorted(list(range(20)) * 2)
    run(shell, "%samza_clean")
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("job 'tidy' (job.id '1'): removed ") and len(lines) <= 5, lines
    assert rows(output) == list(range(20)), "the current generation, each row once"

    # a running job: refused, nothing removed
    fill(broker, "live", 1, 5, end=False)
    run(shell, config_cell(broker, "live", job="tidy", job_logged_store_base_dir=tmp_path, **spark))
    run(shell, "%samza_run --no-dashboard")
    capsys.readouterr()
    result = run(shell, "%samza_clean --all")
    line = error_line(result, capsys)
    assert "samza_clean: job 'tidy' is running: %samza_stop tidy before cleaning it" in line, line
    run(shell, "%samza_stop")
    assert (tmp_path / "tidy-1").is_dir()
    capsys.readouterr()
    run(shell, "%samza_clean --all")
    lines = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith("  current output generations:") for line in lines), lines
    assert not (tmp_path / "tidy-1").exists()
