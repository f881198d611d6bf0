"""A failed job of two container processes links its failing message, in a real Jupyter kernel: the
container that failed reports the message's stream, partition and offset to its job coordinator, and the
failure line (on the dashboard, and in the next cell) gives the ``%samza_browse`` line that shows it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.requirements import require

from .kernel import Kernel, repository_kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    with repository_kernel(str(tmp_path_factory.mktemp("browse"))) as k:
        yield k


def test_a_failed_job_of_two_containers_links_its_failing_message(kernel: Kernel, tmp_path: Path) -> None:
    log = DurableLog(tmp_path / "log")
    log.create_stream("payments", 2)
    for i in range(8):  # {"n": 3} is offset 1 of partition 1 (container 1's)
        log.send("payments", json.dumps({"n": i}), key=f"k{i % 3}", partition=i % 2)
    log.flush()
    log.close()
    kernel.run(
        "%%samza_config\n"
        "job.name = pay\ntask.class = tests.notebook.sample_tasks.FailOnThree\ntask.inputs = log.payments\n"
        f"systems.log.log.dir = {tmp_path / 'log'}\nsystems.log.samza.msg.serde = json\n"
        "systems.log.samza.key.serde = string\nsystems.log.samza.offset.default = oldest\n"
        f"job.container.count = 2\njob.logged.store.base.dir = {tmp_path / 'state'}\n"
        "cluster-manager.container.status.interval.ms = 50\n"
    )
    kernel.run("%samza_run")  # in the background, with its dashboard
    eventually(lambda: kernel.value("samza.run.done"), timeout=90, message="the job failed")
    dashboard = "samza.dashboard.header.value + samza.dashboard.body.value"
    eventually(lambda: "samza-error" in kernel.value(dashboard), timeout=30, message="the dashboard tells it")
    shown = kernel.value(dashboard)
    link = "the failing message log.payments#1@1: %samza_browse log.payments --partition 1 --from 1 -n 1"
    assert link in shown, shown
    assert "to reach it: rerun it as one container (job.container.count = 1)" in shown, shown
    # The browse line of the link shows that message.
    browsed = kernel.run("%samza_browse log.payments --partition 1 --from 1 -n 1").stdout
    text = kernel.value("str(_)")
    assert "{'n': 3}" in text, (browsed, text)
