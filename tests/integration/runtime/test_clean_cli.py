"""``samza-nb clean --config-path F``: what a finished job or an old generation left stays behind after a
run (old Spark output generations, set-aside and cached state files, written inputs), and clean removes it,
saying what and how much; ``--dry-run`` only lists; the current generation stays (the next run resumes
exactly); ``--all`` removes it too; a running job is refused, with nothing removed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.integration.container.test_state_jobs import store_contents
from tests.integration.runtime.test_restore_state import CONFIG, TASK, env, stores
from tests.integration.spark.test_resets import CUSTOMERS, expected_totals, job, orders

pytestmark = pytest.mark.timeout(300)


def samza(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", *args, "--config-path", "job.properties"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )


def ok(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


def files(directory: Path) -> set[Path]:
    return {p for p in directory.rglob("*") if p.is_file()} if directory.is_dir() else set()


def output_rows(output: Path) -> list[tuple[int, str, int]]:
    """What a plain reader of the stream's directory sees: every parquet file under it (every generation's,
    recursively), read by DuckDB."""
    pattern = str(output / "**" / "*.parquet")
    return sorted(duckdb.sql(f"select \"order\", customer, total from read_parquet('{pattern}')").fetchall())


# -- Spark outputs and written inputs --------------------------------------------------------------------
@pytest.fixture
def spark_job(tmp_path: Path) -> Path:
    """A job over a written Spark input (customers, parquet, a bootstrap stream) and a file (orders) with a
    Spark output."""
    pq.write_table(pa.table({"name": list(CUSTOMERS)}), tmp_path / "customers.parquet")
    (tmp_path / "orders.txt").write_text("".join(f"{line}\n" for line in orders(0, 45)))
    config = dict(job(tmp_path, "spent"))
    config.update({
        "task.inputs": "spark.customers,file.orders",
        "systems.spark.streams.customers.spark.path": str(tmp_path / "customers.parquet"),
        "systems.spark.streams.customers.spark.value": "name",
        "systems.spark.samza.offset.default": "oldest",
        "systems.spark.streams.customers.samza.bootstrap": "true",
    })  # fmt: skip
    config.pop("systems.file.streams.customers.path")
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return tmp_path


def expected_rows() -> list[tuple[int, str, int]]:
    lines = orders(0, 45)
    return sorted((n, lines[n].split()[0], total) for n, total in expected_totals(lines).items())


def test_clean_removes_old_output_generations_and_keeps_the_current_one(spark_job: Path) -> None:
    output = spark_job / "state" / "spent-1" / "spark-output"
    ok(samza(spark_job, "run", "--no-progress"))
    ok(samza(spark_job, "reset"))
    ok(samza(spark_job, "run", "--no-progress"))
    # left behind: the first generation's files double every row for a plain reader
    assert output_rows(output / "out") == sorted(expected_rows() * 2)
    before = files(output)
    listed = ok(samza(spark_job, "clean", "--dry-run"))
    assert "would remove" in listed[0] and "dry run" in listed[0], listed
    assert any(line.startswith("  old output generations:") for line in listed), listed
    assert files(output) == before, "a dry run removes nothing"
    lines = ok(samza(spark_job, "clean"))
    assert len(lines) <= 5 and lines[0].startswith("job 'spent' (job.id '1'): removed "), lines
    old = next(line for line in lines if line.startswith("  old output generations:"))
    assert "1 generation(s) of 1 stream(s)" in old, lines
    assert lines[-1].startswith("kept: the current generation"), lines
    assert output_rows(output / "out") == expected_rows(), "the current generation only, exactly once"
    assert ok(samza(spark_job, "clean"))[0] == "job 'spent' (job.id '1'): nothing to clean"
    # the next run resumes from the current generation: nothing new, nothing lost
    ok(samza(spark_job, "run", "--no-progress"))
    assert output_rows(output / "out") == expected_rows()


def test_clean_all_removes_the_current_generation_and_the_written_inputs(spark_job: Path) -> None:
    job_files = spark_job / "state" / "spent-1"
    ok(samza(spark_job, "run", "--no-progress"))
    written = job_files / "spark-input" / "spark" / "customers" / "manifest.json"
    assert written.is_file() and output_rows(job_files / "spark-output" / "out") == expected_rows()
    refused = samza(spark_job, "clean", "--topics")
    assert refused.returncode == 2 and "--topics" in refused.stderr and "--all" in refused.stderr
    lines = ok(samza(spark_job, "clean", "--all"))
    assert any(line.startswith("  written Spark inputs: ") for line in lines), lines
    assert any(line.startswith("  current output generations:") for line in lines), lines
    assert any(line.startswith("  checkpoints: forgotten") for line in lines), lines
    assert not job_files.exists(), sorted(files(job_files))
    # the job starts anew: every order once again
    ok(samza(spark_job, "run", "--no-progress"))
    assert output_rows(job_files / "spark-output" / "out") == expected_rows()


# -- state files -----------------------------------------------------------------------------------------
@pytest.fixture
def counting_job(tmp_path: Path) -> Path:
    (tmp_path / "count_task.py").write_text(textwrap.dedent(TASK))
    (tmp_path / "job.properties").write_text(textwrap.dedent(CONFIG))
    (tmp_path / "words.txt").write_text("".join(f"w{i % 7}\n" for i in range(70)))
    return tmp_path


def test_clean_removes_set_aside_and_cached_state_files(counting_job: Path) -> None:
    ok(samza(counting_job, "run", "--no-progress"))
    state = next(stores(counting_job).glob("partition-*.duckdb"))
    state.write_bytes(b"not a DuckDB file")
    ok(samza(counting_job, "run", "--no-progress", "--restore-state"))
    set_aside = list(stores(counting_job).glob("*.unusable-*"))
    assert set_aside, "left behind: the file --restore-state moved aside"
    lines = ok(samza(counting_job, "clean"))
    assert any(line.startswith("  set-aside state files: 1 file(s)") for line in lines), lines
    cache = next(line for line in lines if line.startswith("  state files:"))
    assert "a cache: every store has a changelog, every task a checkpoint" in cache, lines
    assert not any(stores(counting_job).glob("*")), "set-aside and cached state files removed"
    # the state was a cache: the next run restores it from the changelog, exactly
    ok(samza(counting_job, "run", "--no-progress"))
    assert store_contents(stores(counting_job), "counts") == Counter(f"w{i % 7}" for i in range(70))


def test_clean_keeps_state_files_that_are_the_only_record_of_the_progress(counting_job: Path) -> None:
    ok(samza(counting_job, "run", "--no-progress"))
    (counting_job / "state" / "restore-1" / "samza.duckdb").unlink()  # the checkpoints lost (as a topic)
    before = files(stores(counting_job))
    lines = ok(samza(counting_job, "clean"))
    assert lines[-1].startswith("kept: ") and "task 'Partition 0' has no checkpoint" in lines[-1], lines
    assert files(stores(counting_job)) == before
    # the task resumes from its state file's offsets: no word counted twice
    ok(samza(counting_job, "run", "--no-progress"))
    assert store_contents(stores(counting_job), "counts") == Counter(f"w{i % 7}" for i in range(70))


def test_clean_is_refused_while_the_job_runs(counting_job: Path) -> None:
    ok(samza(counting_job, "run", "--no-progress"))
    state_file = next(stores(counting_job).glob("partition-*.duckdb"))
    (stores(counting_job) / "partition-9.duckdb.unusable-x").write_bytes(b"left")
    before = files(counting_job / "state")
    holder = subprocess.Popen(  # a running job holds its state file (DuckDB's lock)
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(state_file)!r}); "
         "print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        refused = samza(counting_job, "clean", "--all")
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert refused.returncode == 1 and refused.stdout == ""
    errors = [line for line in refused.stderr.splitlines() if line.startswith("samza-nb: error: ")]
    assert len(errors) == 1 and "cannot clean job 'restore'" in errors[0] and "while it runs" in errors[0]
    assert files(counting_job / "state") == before, "nothing removed"
