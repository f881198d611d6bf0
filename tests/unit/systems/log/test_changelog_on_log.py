"""A store's changelog on the embedded durable log: the default when the job names no system."""

from __future__ import annotations

import collections
import random
import shutil
from pathlib import Path
from typing import Any

from samza_nb import Config
from samza_nb.config.stores import changelog_systems
from samza_nb.systems.log import DurableLog
from tests.unit.container import test_state_jobs as state_jobs
from tests.unit.container.harness import Job
from tests.unit.container.test_state_jobs import WORDS, CountingTask, store_contents


def stateful_job(tmp_path: Path) -> Job:
    job = state_jobs.stateful_job(tmp_path)
    job.config["stores.counts.changelog"] = "counts-changelog"  # no system named: the durable log, "log"
    # The container starts the systems of its inputs and of systems.<name>.samza.factory keys only;
    # until it also starts changelog_systems(config), the log system is named here.
    job.config["systems.log.samza.factory"] = "samza_nb.systems.log.LogSystemFactory"
    assert changelog_systems(Config(job.config)) == {"log"}
    return job


def test_a_store_is_restored_from_its_changelog_on_the_durable_log(tmp_path: Path) -> None:
    rng = random.Random(5)
    first = [rng.choice(WORDS[:20]) for _ in range(300)]
    second = [rng.choice(WORDS[:20]) for _ in range(200)]
    job = stateful_job(tmp_path)
    job.send("in", first)
    job.run(CountingTask, max_messages=len(first))
    state = tmp_path / "state" / "test-job-1" / "stores"
    assert store_contents(state) == dict(collections.Counter(first))
    with DurableLog(tmp_path / "state" / "log") as log:  # <job.logged.store.base.dir>/log
        assert log.partitions("counts-changelog") == 1
        records = list(log.read("counts-changelog", 0))
    assert len(records) >= len(set(first))
    assert {key.decode() for _, key, _ in records} == set(first)

    shutil.rmtree(state)  # the local state is lost: the restart restores it from the log
    job.send("in", second)
    job.end()
    job.run(CountingTask)
    restored: list[Any] = [e for e in job.events if type(e).__name__ == "StoreRestoreProgress"]
    assert restored and restored[-1].done
    assert store_contents(state) == dict(collections.Counter(first + second))
