"""``samza-nb run`` with one container still goes through a job coordinator: the config and the task
layout are kept in the coordinator stream, and a stateful job whose input partitions changed is refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from samza_nb.coordinator import CoordinatorStreamStore
from samza_nb.runtime.cli.main import main
from samza_nb.systems.log import DurableLog


def write_job(workdir: Path, stream: str, *, stateful: bool = True, **extra: str) -> Path:
    config = {
        "job.name": "one-container",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "task.inputs": f"log.{stream}",
        "systems.log.samza.offset.default": "oldest",
        "job.logged.store.base.dir": str(workdir / "state"),
        **({"stores.seen.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory"} if stateful else {}),
        **extra,
    }
    path = workdir / "job.properties"
    path.write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return path


def fill(workdir: Path, stream: str, partitions: int) -> None:
    log = DurableLog(workdir / "state" / "log")
    try:
        log.create_stream(stream, partitions)
        for p in range(partitions):
            for i in range(5):
                log.send(stream, f"{stream}-{p}-{i}", partition=p)
        log.flush()
    finally:
        log.close()


async def coordinator_view(path: Path) -> tuple[dict[str, str], dict[str, int]]:
    from samza_nb.config import load_config

    store = CoordinatorStreamStore(load_config(path))
    await store.start()
    try:
        return store.config(), store.changelog_mapping()
    finally:
        await store.stop()


def test_a_single_container_run_keeps_config_and_changelog_mapping_in_the_coordinator_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    fill(tmp_path, "clicks", 2)
    path = write_job(tmp_path, "clicks")
    assert main(["run", "--config-path", str(path), "--max-messages", "10", "--no-progress"]) == 0
    config, changelog = asyncio.run(coordinator_view(path))
    assert config["task.inputs"] == "log.clicks"
    assert changelog == {"Partition 0": 0, "Partition 1": 1}
    assert len((tmp_path / "processed.log").read_text().splitlines()) == 10

    # The same stateful job over an input with 3 partitions would mix state: refused, nothing runs.
    fill(tmp_path, "clicks3", 3)
    path = write_job(tmp_path, "clicks3")
    capsys.readouterr()
    assert main(["run", "--config-path", str(path), "--max-messages", "10", "--no-progress"]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error:" in error and "Partition 2" in error, error
    assert len((tmp_path / "processed.log").read_text().splitlines()) == 10
    assert asyncio.run(coordinator_view(path))[1] == {"Partition 0": 0, "Partition 1": 1}


def test_changing_the_container_count_carries_the_default_checkpoints_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One container checkpoints to DuckDB, two to the durable log: the job coordinator carries the
    checkpoints over, so the two-container run resumes where the one-container run stopped (a stateless
    job: a stateful one would also resume from its state files)."""
    from collections import Counter

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[3]))
    fill(tmp_path, "clicks", 2)  # 10 messages
    extra = {"cluster-manager.container.status.interval.ms": "50"}
    path = write_job(tmp_path, "clicks", stateful=False, **extra)
    assert main(["run", "--config-path", str(path), "--max-messages", "4", "--no-progress"]) == 0
    first = (tmp_path / "processed.log").read_text().splitlines()
    assert 4 <= len(first) < 10
    path = write_job(tmp_path, "clicks", stateful=False, **extra, **{"job.container.count": "2"})
    rest = str(10 - len(first))
    assert main(["run", "--config-path", str(path), "--max-messages", rest, "--no-progress"]) == 0
    messages = Counter(line.split(" ")[-1] for line in (tmp_path / "processed.log").read_text().splitlines())
    assert messages == Counter(f"clicks-{p}-{i}" for p in range(2) for i in range(5)), "each exactly once"
