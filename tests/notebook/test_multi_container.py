"""A notebook job with ``job.container.count`` = 2 in a real Jupyter kernel: the job coordinator runs in the
kernel (on a thread of its own) and the containers are real child processes; inputs in the durable log (no
broker). The
dashboard and ``%samza_status`` list every container and its tasks; ``%samza_stop`` commits; in-memory
inputs are refused; a ``%%samza_task`` cell runs in the processes when it is self-contained, and one that
is not gives one clear line."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]

SELF_CONTAINED = (
    "each container process imports the %%samza_task cell on its own and sees none of the notebook's "
    "other cells: import or define what the cell uses inside the cell"
)

LINES_TASK = """%%samza_task
import json
import os

class Lines(StreamTask):
    def init(self, context):
        self.out = open(context.config.get_str("test.output"), "a")
        self.task = context.task_name
    def process(self, envelope, collector, coordinator):
        self.out.write(f"{self.task}|{os.getpid()}|{envelope.message.decode()}\\n")
        self.out.flush()
    def close(self):
        self.out.close()
"""


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notebook-multi")


@pytest.fixture(scope="module")
def kernel(workdir: Path) -> Iterator[Kernel]:
    """A kernel working in ``workdir`` that (with its container processes) can import this repository."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    k = Kernel(cwd=str(workdir), env=dict(os.environ, PYTHONPATH=path))
    k.run("%load_ext samza_nb")
    yield k
    k.close()


def fill(base: Path, stream: str, partitions: int, per_partition: int) -> Counter[str]:
    """``per_partition`` messages ``<stream>-p<p>-<i>`` in each partition of a durable-log stream."""
    log = DurableLog(base / "log")
    log.create_stream(stream, partitions)
    for p in range(partitions):
        log.send_batch(stream, ((None, f"{stream}-p{p}-{i}".encode(), p) for i in range(per_partition)))
    log.flush()
    log.close()
    return Counter(f"{stream}-p{p}-{i}" for p in range(partitions) for i in range(per_partition))


def config_cell(job: str, base: Path, stream: str, **extra: object) -> str:
    lines = [
        f"job.name = {job}",
        f"task.inputs = log.{stream}",
        "systems.log.samza.offset.default = oldest",
        "job.container.count = 2",
        f"job.logged.store.base.dir = {base}",
        "task.commit.ms = 100",
        "cluster-manager.container.status.interval.ms = 50",
    ]
    lines += [f"{key.replace('_', '.')} = {value}" for key, value in extra.items()]
    return "%%samza_config\n" + "\n".join(lines) + "\n"


def recorded(workdir: Path, stream: str) -> list[tuple[str, int, str]]:
    """(task, pid, message) of every line tests.unit.runtime.multi_tasks.Record wrote for ``stream``."""
    path = workdir / "processed.log"
    rows = [line.split(" ") for line in path.read_text().splitlines()] if path.exists() else []
    return [(r[0], int(r[1]), r[4]) for r in rows if len(r) == 5 and r[2] == stream]


def error_of(kernel: Kernel, code: str) -> str:
    """The one line of the error a cell showed (no traceback)."""
    (error,) = kernel.run(code, check=False).of_type("error")
    (line,) = error["content"]["traceback"]
    return str(line)


def containers(kernel: Kernel) -> Any:
    return kernel.value(
        "[(c.container_id, str(c.state), c.processed, c.tasks, c.pid) for c in samza.view.containers]"
    )


def test_two_container_processes_from_a_notebook(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "two"
    messages = fill(base, "clicks", 4, 100)
    kernel.run(config_cell("two", base, "clicks", task_class="tests.unit.runtime.multi_tasks.Record"))
    start = kernel.run("%samza_run")
    assert start.of_type("display_data"), "the dashboard is displayed"
    assert kernel.value("samza.running")
    assert kernel.value("samza.run.mode") == "on its own thread"

    eventually(lambda: Counter(m for *_, m in recorded(workdir, "clicks")) == messages, timeout=60)

    def both_reported_everything() -> Any:
        now = containers(kernel)
        return now if [(c[1], c[2]) for c in now] == [("running", 200)] * 2 else None

    (zero, one) = eventually(both_reported_everything, timeout=30)
    assert zero[:4] == ("0", "running", 200, ("Partition 0", "Partition 2"))
    assert one[:4] == ("1", "running", 200, ("Partition 1", "Partition 3"))
    pids = {task: pid for task, pid, _ in recorded(workdir, "clicks")}
    assert {pids["Partition_0"], pids["Partition_2"]} == {zero[4]}, (
        "container 0 runs its tasks in its process"
    )
    assert {pids["Partition_1"], pids["Partition_3"]} == {one[4]}
    assert zero[4] != one[4] and kernel.value("__import__('os').getpid()") not in pids.values()
    assert kernel.value("samza.view.processed") == 400  # the job's total

    # The dashboard (rendered on the session's refresh interval) and the text status show the same.
    eventually(
        lambda: (
            kernel.value("samza.dashboard.body.value").count(
                "<td style='padding:0 8px;white-space:nowrap'>200</td>"
            )
            == 2
        )
    )
    body = kernel.value("samza.dashboard.body.value")
    assert "<div class='samza-containers'>" in body and body.count("<div class='samza-task-row'") == 4
    for row in (zero, one):
        assert f"<td style='padding:0 8px;white-space:nowrap'>{row[4]}</td>" in body
        assert f"<td style='padding:0 8px;white-space:nowrap'>{', '.join(row[3])}</td>" in body
    assert "<span class='samza-processed'><b>400</b> processed</span>" in kernel.value(
        "samza.dashboard.header.value"
    )
    status = kernel.run("report = %samza_status\nprint(report)").stdout
    assert re.search(rf"^0 +running +\S+ +{zero[4]} +200 +Partition 0, Partition 2$", status, re.M), status
    assert re.search(rf"^1 +running +\S+ +{one[4]} +200 +Partition 1, Partition 3$", status, re.M), status
    assert re.search(r"^Partition 3 +0/1 +1/1 +100 +— +— +(processing|idle)$", status, re.M), status
    assert re.search(r"^log\.clicks#3 +100 +99 ", status, re.M), status  # processed: a count
    assert "400 processed" in status.splitlines()[0]

    assert "job 'two' stopped: 400 messages" in kernel.run("%samza_stop").stdout  # it waits for the stop
    assert kernel.value("str(samza.run.outcome)") == "stopped"
    assert [c[:3] for c in containers(kernel)] == [("0", "stopped", 200), ("1", "stopped", 200)]
    # Every message once, and each container committed its tasks' offsets when it stopped.
    assert Counter(m for *_, m in recorded(workdir, "clicks")) == messages
    report = kernel.run("report = %samza_checkpoints\nprint(report)").stdout
    assert "samza_nb.checkpoint.log.LogCheckpointManagerFactory" in report
    for p in range(4):
        assert re.search(rf"^Partition {p} +log\.clicks#{p} +99$", report, re.M), report


def test_an_in_memory_input_is_refused_before_anything_starts(kernel: Kernel, workdir: Path) -> None:
    before = kernel.value("id(samza.run)")
    kernel.run(
        "%%samza_config\njob.name = mem\ntask.inputs = mem.words\njob.container.count = 2\n"
        "systems.mem.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
        "task.class = tests.unit.runtime.multi_tasks.Record\n"
    )
    assert error_of(kernel, "%samza_run") == (
        "NotebookError: samza_run: job.container.count=2 runs the job as 2 processes, but its input "
        "mem.words is an in-memory stream, which lives in this kernel only: use a stream several processes "
        "can share (the durable log, Kafka, files), or job.container.count=1"
    )
    assert kernel.value("id(samza.run)") == before, "no run was started"


def test_a_self_contained_task_cell_runs_in_the_container_processes(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "cell"
    messages = fill(base, "words", 2, 20)
    output = workdir / "cell-output.txt"
    kernel.run(config_cell("cell", base, "words", test_output=output))
    kernel.run(LINES_TASK)
    kernel.run("%samza_run --max-messages 40")
    kernel.run("await samza.wait(timeout=60)")
    assert kernel.value("str(samza.run.outcome)") == "finished", kernel.value("samza.run.view.error")
    rows = [line.split("|") for line in output.read_text().splitlines()]
    assert Counter(message for *_, message in rows) == messages
    assert {(task, pid) for task, pid, _ in rows} == {
        ("Partition 0", str(containers(kernel)[0][4])),
        ("Partition 1", str(containers(kernel)[1][4])),
    }
    task_class = kernel.value("samza.run.job.config['task.class']")
    module, _, name = task_class.rpartition(".")
    assert name == "Lines" and module.startswith("samza_task_")
    written = (base / "cell-1" / "notebook_task" / f"{module}.py").read_text()
    assert written.splitlines()[0].startswith("from samza_nb import *")
    assert written.splitlines()[1:] == LINES_TASK.splitlines()[1:]  # line numbers as in the notebook


def test_a_task_cell_using_another_cells_name_is_refused(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "helper"
    fill(base, "names", 2, 5)
    kernel.run(config_cell("helper", base, "names"))
    kernel.run("shout = str.upper")
    kernel.run(
        "%%samza_task\nclass Upper:\n    def process(self, envelope, collector, coordinator):\n"
        "        shout(envelope.message.decode())\n"
    )
    assert error_of(kernel, "%samza_run") == (
        "NotebookError: samza_run: the %%samza_task cell of Upper uses shout without defining or importing "
        f"it; with job.container.count=2, {SELF_CONTAINED}"
    )


def test_a_task_cell_the_processes_cannot_import_fails_with_one_line(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "unimportable"
    fill(base, "events", 2, 5)
    only_here = workdir / "kernel_only"
    only_here.mkdir()
    (only_here / "kernel_only_helpers.py").write_text("def shout(text):\n    return text.upper()\n")
    kernel.run(f"import sys\nsys.path.insert(0, {str(only_here)!r})")
    kernel.run(config_cell("unimportable", base, "events"))
    kernel.run(
        "%%samza_task\nimport kernel_only_helpers\nclass Shout:\n"
        "    def process(self, envelope, collector, coordinator):\n"
        "        kernel_only_helpers.shout(envelope.message.decode())\n"
    )
    line = error_of(kernel, "%samza_run --wait --timeout 60")
    assert re.match(
        r"NotebookError: job 'unimportable' failed after 0 messages: ContainerFailedError: container [01] "
        r"failed: task\.class='samza_task_\w+\.Shout' cannot be imported: importing module "
        r"'samza_task_\w+' raised ModuleNotFoundError: No module named 'kernel_only_helpers' "
        r"\(exited with status 2\); ",
        line,
    ), line
    assert line.endswith(SELF_CONTAINED)


def test_pause_set_and_resume_reach_both_container_processes(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "steered"
    fill(base, "slow", 2, 400)
    kernel.run("samza.task = None")  # run task.class, not the task cell an earlier test defined
    kernel.run(
        config_cell(
            "steered", base, "slow", task_class="tests.unit.runtime.multi_tasks.Record", test_sleep_ms=5
        )
    )
    kernel.run("%samza_run")
    eventually(
        lambda: len({pid for _, pid, _ in recorded(workdir, "slow")}) == 2, timeout=60, message="both run"
    )
    paused = kernel.run("%samza_pause").stdout
    assert "job 'steered' paused after" in paused
    assert kernel.value("__import__('samza_nb.notebook').notebook.job().paused") is True
    held = len(recorded(workdir, "slow"))
    eventually(
        lambda: kernel.value("all(r.paused for r in samza.run.job.status().reports.values())"),
        message="both reported paused",
    )
    assert "task.max.concurrency = 2  (changed)" in kernel.run("%samza_set task.max.concurrency=2").stdout
    refused = error_of(kernel, "%samza_set systems.log.streams.slow.samza.priority=3")
    assert "refused and withdrawn: container 0: " in refused and "container 1: " in refused
    assert "several containers" in error_of(kernel, "%samza_step")
    assert len(recorded(workdir, "slow")) == held, "nothing processed while paused"
    kernel.run("%samza_resume")
    eventually(lambda: len(recorded(workdir, "slow")) > held, timeout=60, message="going on after the resume")
    kernel.run("%samza_stop")


COUNTING_TASK = """%%samza_task
class Count(StreamTask):
    def init(self, context):
        self.counts = context.get_store("counts")
    def process(self, envelope, collector, coordinator):
        word = envelope.message.decode().split("-")[1]
        self.counts.put(word, (self.counts.get(word) or 0) + 1)
"""


def test_sql_over_the_stores_the_containers_committed(kernel: Kernel, workdir: Path) -> None:
    """%%samza_sql unions what every container committed: while the job runs (each container answers for
    its task partitions, through the coordinator) and once the run ended (its state files)."""
    base = workdir / "sql"
    fill(base, "pages", 4, 30)
    stores = {
        "stores_counts_factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores_counts_key_serde": "string",
        "stores_counts_msg_serde": "json",
    }
    kernel.run(config_cell("sql", base, "pages", **stores))
    kernel.run(COUNTING_TASK)
    kernel.run("%samza_run")
    kernel.run("assert await samza.until(lambda view: view.processed == 120, timeout=60)")
    expected = [("p0", "30", 0), ("p1", "30", 1), ("p2", "30", 2), ("p3", "30", 3)]  # JSON reads as text
    query = "frame = get_ipython().run_cell_magic('samza_sql', 'counts', 'SELECT * FROM counts ORDER BY key')"

    def rows() -> Any:
        if kernel.run(query, check=False).of_type("error"):  # (nothing committed yet: once, at most)
            return None
        return kernel.value("[tuple(row) for row in frame.itertuples(index=False)]")

    eventually(lambda: rows() == expected, timeout=30, message="the running job's committed counts")
    assert "job 'sql' stopped: 120 messages" in kernel.run("%samza_stop").stdout
    assert rows() == expected


def test_what_container_processes_print_goes_to_the_run_cell(kernel: Kernel, workdir: Path) -> None:
    """A task running in a container process prints: its lines are relayed into the output area of the
    cell that started the job (updated by its display id), never into a cell that runs meanwhile."""
    base = workdir / "loud"
    fill(base, "loud", 2, 50)
    kernel.run(config_cell("loud", base, "loud"))
    kernel.run(
        "%%samza_task\nclass Loud(StreamTask):\n"
        "    def process(self, envelope, collector, coordinator):\n"
        "        print('LOUD', envelope.message.decode(), flush=True)\n"
    )
    kernel.run("%samza_run")
    later = kernel.run("assert await samza.until(lambda view: view.processed == 100, timeout=60)")
    stopped = kernel.run("%samza_stop")
    assert "LOUD" not in later.stdout and "LOUD" not in stopped.stdout, "printed into another cell"
    updates = [
        json.dumps(m["content"]["data"])
        for m in [*later.messages, *stopped.messages, *kernel.display_updates]
        if m["msg_type"] == "update_display_data"
    ]
    for p in range(2):
        assert any(f"LOUD loud-p{p}-49" in text for text in updates), f"partition {p}'s last print"
