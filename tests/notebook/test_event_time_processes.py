"""``%samza_time`` of a job of two container processes, in a real Jupyter kernel: the job coordinator asks
each container for its event time and the view is their union, so a partition of one container that holds
back the watermark while the other container's goes on is named, with both containers' partitions and
windows listed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb.control import WatermarkMessage
from samza_nb.control.serde import IntermediateMessageSerde
from samza_nb.systems.log import DurableLog
from tests.requirements import require

from .kernel import Kernel, repository_kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")

pytestmark = pytest.mark.slow

SERDE = "samza_nb.control.serde.IntermediateMessageSerde"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with repository_kernel(
        str(tmp_path_factory.mktemp("time")), "%load_ext samza_nb\n%config SamzaMagics.dashboard = 'off'"
    ) as k:
        yield k


def send(base: Path, partition: int, start_ms: int, clicks: int) -> None:
    """``clicks`` clicks 100 ms of event time apart after ``start_ms``, then a source watermark."""
    serde = IntermediateMessageSerde()
    log = DurableLog(base / "log")
    if "clicks" not in log.streams():
        log.create_stream("clicks", 2)
    for i in range(1, clicks + 1):
        click = serde.to_bytes({"user": "abc"[i % 3]})
        log.send("clicks", click, partition=partition, timestamp=start_ms + 100 * i)
    mark = start_ms + 100 * clicks
    log.send("clicks", serde.to_bytes(WatermarkMessage(timestamp=mark)), partition=partition, timestamp=mark)
    log.flush()
    log.close()


MARKS = "{p.ssp.partition: p.watermark for p in _t.time.partitions if p.ssp.stream == 'clicks'}"


def test_samza_time_covers_a_job_of_two_containers(kernel: Kernel, tmp_path: Path) -> None:
    base = tmp_path / "timed"
    send(base, 0, 0, 40)  # partition 0 (container 0) at 4,000 ms
    send(base, 1, 0, 10)  # partition 1 (container 1) at 1,000 ms, then nothing
    kernel.run(
        "%%samza_config\n"
        "job.name = timed\napp.class = tests.notebook.sample_tasks.ClicksPerUser\n"
        "job.default.system = log\nsystems.log.samza.offset.default = oldest\n"
        f"systems.log.streams.clicks.samza.msg.serde = {SERDE}\n"
        f"job.container.count = 2\njob.logged.store.base.dir = {base}\n"
        "cluster-manager.container.status.interval.ms = 50\n"
    )
    kernel.run("%samza_run")
    try:
        both = (
            "import asyncio\n_t = _error = None\n"
            "for _ in range(300):\n"
            "    try:\n"
            "        _t = %samza_time\n"
            "        if " + MARKS + " == {0: 4000, 1: 1000}:\n"
            "            break\n"
            "    except Exception as exc:\n"
            "        _error = exc\n"
            "    await asyncio.sleep(0.1)  # polling the job's event time (an observed condition)\n"
        )
        kernel.run(both)
        assert kernel.value(f"None if _t is None else {MARKS}") == {0: 4000, 1: 1000}, kernel.value(
            "str(_error)"
        )
        report = kernel.run("print(_t)").stdout
        assert report.startswith("event time of job 'timed' ("), report
        named = "log.clicks#1 (task Partition 1) holds back the watermark at 1,000 ms: 3,000 ms behind"
        assert kernel.value(f"[line[: len({named!r})] for line in _t.time.holding_back]") == [named]
        tasks = kernel.value("sorted({o.task for o in _t.time.operators if o.op_id == 'per-second'})")
        assert tasks == ["Partition 0", "Partition 1"]  # the operators of both containers
        fired = kernel.value("{o.task: o.fired for o in _t.time.operators if o.op_id == 'per-second'}")
        assert fired["Partition 0"] > fired["Partition 1"] > 0  # each task's own watermark fired its panes
        assert kernel.value("{w.task for w in _t.time.windows}") == {"Partition 0", "Partition 1"}
    finally:
        kernel.run("%samza_stop")
