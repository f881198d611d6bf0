"""A state file that cannot be opened (truncated, not DuckDB, locked by a live process) stops ``samza-nb run``
with one line saying what to do; ``--restore-state`` moves an unusable one aside and the stores restore from
their changelogs, with exact counts."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.container.test_state_jobs import store_contents

pytestmark = pytest.mark.faults

ROOT = Path(__file__).resolve().parents[3]

TASK = """
class CountTask:
    def init(self, context):
        self.counts = context.get_store("counts")

    def process(self, envelope, collector, coordinator):
        word = envelope.message
        self.counts.put(word, (self.counts.get(word) or 0) + 1)
"""

CONFIG = """
job.name = restore
task.class = count_task.CountTask
task.inputs = file.words
systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
systems.file.streams.words.path = words.txt
systems.file.samza.offset.default = oldest
stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory
stores.counts.key.serde = string
stores.counts.msg.serde = int
stores.counts.changelog = counts-changelog
job.logged.store.base.dir = state
"""

WORDS = ["apple", "pear", "plum", "fig", "kiwi"]


def words(start: int, count: int) -> list[str]:
    return [WORDS[(i * 7) % 5] + str(i % 13) for i in range(start, start + count)]


def add_words(workdir: Path, lines: list[str]) -> None:
    with (workdir / "words.txt").open("a") as file:
        file.writelines(f"{line}\n" for line in lines)


def one_error_line(stderr: str) -> str:
    """The one error line (a warning before it is fine: a commit that failed drops its writes)."""
    errors = [line for line in stderr.splitlines() if line.startswith("samza-nb: error: ")]
    assert len(errors) == 1 and "Traceback" not in stderr, stderr
    return errors[0]


def env() -> dict[str, str]:
    """This checkout's samza_nb first; ResourceWarnings are errors."""
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONWARNINGS="error::ResourceWarning")


def run(workdir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress", *extra],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )


@pytest.fixture
def job(tmp_path: Path) -> Path:
    """A counting job that has run once over 300 words: its state file and changelog exist."""
    (tmp_path / "count_task.py").write_text(textwrap.dedent(TASK))
    (tmp_path / "job.properties").write_text(textwrap.dedent(CONFIG))
    add_words(tmp_path, words(0, 300))
    first = run(tmp_path)
    assert first.returncode == 0, first.stderr
    assert store_contents(stores(tmp_path), "counts") == Counter(words(0, 300))
    return tmp_path


def stores(workdir: Path) -> Path:
    return workdir / "state" / "restore-1" / "stores"


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database\n" * 100)


def empty(path: Path) -> None:
    path.write_bytes(b"")


def flip_block(at: float) -> Callable[[Path], None]:
    """Flip 64 bytes ``at`` (a fraction) into the file's blocks: DuckDB's block checksum then fails, on
    open (the first block) or only when the block is first read (a store's data: at the commit)."""

    def flip(path: Path) -> None:
        data = bytearray(path.read_bytes())
        start = 12288 + int((len(data) - 12288) * at)
        data[start : start + 64] = bytes(b ^ 0xFF for b in data[start : start + 64])
        path.write_bytes(bytes(data))

    return flip


@pytest.mark.parametrize(
    "damage",
    [truncate, garbage, empty, flip_block(0.001), flip_block(0.2)],
    ids=["truncated", "not DuckDB", "empty", "damaged first block", "damaged data block"],
)
def test_an_unusable_state_file_is_one_line_naming_the_file_and_restore_state_rebuilds_it(
    job: Path, damage: object
) -> None:
    state_file = stores(job) / "partition-0.duckdb"
    damage(state_file)  # type: ignore[operator]
    damaged = state_file.read_bytes()
    add_words(job, words(300, 200))

    failed = run(job)
    assert failed.returncode == 1
    line = one_error_line(failed.stderr)
    assert str(state_file) in line and "--restore-state" in line and f"delete {state_file}" in line
    assert state_file.read_bytes() == damaged  # left alone

    restored = run(job, "--restore-state")
    assert restored.returncode == 0, restored.stderr
    assert f"moved {state_file}" in restored.stderr
    aside = [p for p in stores(job).iterdir() if p.name.startswith("partition-0.duckdb.unusable-")]
    assert [p.read_bytes() for p in aside] == [damaged]  # kept for inspection, not deleted
    # The stores came back from the changelog, then the new words were counted once each.
    assert store_contents(stores(job), "counts") == Counter(words(0, 500))

    again = run(job, "--restore-state")  # nothing left to move: a plain run
    assert again.returncode == 0, again.stderr
    assert "moved" not in again.stderr


def test_a_state_file_locked_by_a_live_process_names_it_and_is_not_moved(job: Path) -> None:
    state_file = stores(job) / "partition-0.duckdb"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); "
            "sys.stdin.read()",
            str(state_file),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        for extra in ((), ("--restore-state",)):
            failed = run(job, *extra)
            assert failed.returncode == 1
            line = one_error_line(failed.stderr)
            assert str(state_file) in line and f"in use by process {holder.pid}" in line, line
            assert f"stop process {holder.pid}" in line
        assert sorted(p.name for p in stores(job).iterdir()) == ["partition-0.duckdb"]
    finally:
        holder.communicate("")
    assert run(job).returncode == 0


def test_restore_state_refuses_when_a_store_has_no_changelog(job: Path) -> None:
    config = job / "job.properties"
    config.write_text(config.read_text().replace("stores.counts.changelog = counts-changelog\n", ""))
    state_file = stores(job) / "partition-0.duckdb"
    garbage(state_file)
    failed = run(job, "--restore-state")
    assert failed.returncode == 1
    line = one_error_line(failed.stderr)
    assert "store 'counts' has no changelog" in line and f"Delete {state_file}" in line
    assert sorted(p.name for p in stores(job).iterdir()) == ["partition-0.duckdb"]
