"""``samza-nb reset --config-path F``: the job starts over (checkpoints, state files, the changelog's
position) with one line saying what was dropped, and is refused, changing nothing, while the job runs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.container.test_state_jobs import store_contents
from tests.integration.runtime.test_restore_state import CONFIG, TASK, env, run, stores

pytestmark = pytest.mark.timeout(300)


def reset(workdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", "reset", "--config-path", "job.properties"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )


def write_words(workdir: Path, words: list[str]) -> None:
    (workdir / "words.txt").write_text("".join(f"{word}\n" for word in words))


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "count_task.py").write_text(textwrap.dedent(TASK))
    (tmp_path / "job.properties").write_text(textwrap.dedent(CONFIG))
    return tmp_path


def test_reset_starts_the_job_over_and_a_later_restore_brings_no_old_state_back(workdir: Path) -> None:
    old = [f"old{i % 5}" for i in range(50)]
    write_words(workdir, old)
    assert run(workdir).returncode == 0
    assert store_contents(stores(workdir), "counts") == Counter(old)
    done = reset(workdir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and "reset" in lines[0] and "counts-changelog" in lines[0], done.stdout
    # the input made anew: the job processes all of it, from empty stores
    new = [f"new{i % 3}" for i in range(30)]
    write_words(workdir, new)
    second = run(workdir)
    assert second.returncode == 0, second.stderr
    assert store_contents(stores(workdir), "counts") == Counter(new)
    # the local state is lost: the restore reads the changelog's new generation only
    shutil.rmtree(stores(workdir))
    third = run(workdir)
    assert third.returncode == 0, third.stderr
    assert store_contents(stores(workdir), "counts") == Counter(new)


def test_reset_is_refused_while_the_job_runs(workdir: Path) -> None:
    write_words(workdir, [f"w{i}" for i in range(20)])
    assert run(workdir).returncode == 0
    state_file = next(stores(workdir).glob("partition-*.duckdb"))
    holder = subprocess.Popen(  # a running job holds its state file (DuckDB's lock)
        [sys.executable, "-c", f"import duckdb, sys; c = duckdb.connect({str(state_file)!r}); "
         "print('open', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        refused = reset(workdir)
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
        holder.stdout.close()
    assert refused.returncode == 1
    errors = [line for line in refused.stderr.splitlines() if line.startswith("samza-nb: error: ")]
    assert len(errors) == 1 and "while it runs" in errors[0], refused.stderr
    assert store_contents(stores(workdir), "counts") == Counter(f"w{i}" for i in range(20)), "nothing dropped"
