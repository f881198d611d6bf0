"""A StreamApplication split into a job per stage, its intermediate stream on the real broker: started by
``samza-nb run`` with app.split.jobs = true on bounded file inputs, both jobs stop by themselves once the
input ended (end-of-stream reconciled across the jobs through Kafka)."""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from pathlib import Path

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.runtime.test_application_runs import expected, lines, run, workdir_for

from .helpers import kafka_config, read_topic


def test_an_application_split_in_two_jobs_on_kafka_stops_when_its_input_ends(
    kafka_broker: DevBroker, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    name = f"split-{uuid.uuid4().hex[:8]}"
    config = kafka_config(bootstrap, **{"job.name": name, "job.default.system": "kafka"})
    workdir = workdir_for(tmp_path, 15, 25, **config)
    done = run(workdir, "app.split.jobs=true")
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(15, 25)
    assert f"{name}-stage-0/Partition 0" in done.stdout and f"{name}-stage-1/Partition 1" in done.stdout

    # The intermediate topic holds the 40 messages and the control messages that ended it.
    records = asyncio.run(read_topic(bootstrap, f"{name}-1-partition_by-by-key", 2))
    assert sum(len(r) for r in records.values()) > 40
