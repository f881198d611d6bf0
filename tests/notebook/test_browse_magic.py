"""``%samza_browse`` in a real Jupyter kernel (issue 42 item 3): the messages of a job's durable log streams
(its input and its output) as a table decoded with the streams' serdes, one line for a stream, partition or
offset that does not exist, and a failed job's failure line (in the cell and on its dashboard) linking the
failing message to the browse line that shows it and the replay and steps that reach it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.eventually import eventually
from tests.requirements import require

from .kernel import Kernel, Reply

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow

SETUP = """
%load_ext samza_nb
import tempfile
from samza_nb.systems.log import DurableLog
ROOT = tempfile.mkdtemp(prefix="browse-")
"""

CONFIG = """%%samza_config
job.name = {job}
task.inputs = log.{stream}
systems.log.log.dir = {root}/log
systems.log.samza.msg.serde = json
systems.log.samza.key.serde = string
systems.log.samza.offset.default = oldest
task.commit.ms = -1
"""

COPY_TASK = """%%samza_task
class Copy:
    def process(self, envelope, collector, coordinator):
        SEEN.append(envelope.message["n"])
        if envelope.message["n"] == FAIL_AT:
            raise ValueError("bad n")
        twice = {{"twice": 2 * envelope.message["n"]}}
        collector.send(OutgoingMessageEnvelope(SystemStream("log", "{stream}-out"), twice, key=envelope.key))
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    k.run(SETUP)
    yield k
    k.close()


def fill(kernel: Kernel, stream: str, partitions: int, count: int) -> None:
    """``count`` JSON messages ``{"n": i}`` keyed ``k<i % 3>``, round robin over ``partitions``; header
    ``i`` on each."""
    kernel.run(
        f"log = DurableLog(ROOT + '/log')\nlog.create_stream({stream!r}, {partitions})\n"
        f"for i in range({count}):\n"
        f"    log.send({stream!r}, '{{\"n\": %d}}' % i, key='k%d' % (i % 3), partition=i % {partitions},"
        " headers=(('i', str(i).encode()),))\n"
        "log.flush()\nlog.close()"
    )


def job(kernel: Kernel, name: str, stream: str, fail_at: int = -1) -> None:
    kernel.run(CONFIG.format(job=name, stream=stream, root=kernel.value("ROOT")))
    kernel.run(f"SEEN = []\nFAIL_AT = {fail_at}")
    kernel.run(COPY_TASK.format(stream=stream))


def shown(reply: Reply) -> tuple[str, list[list[str]], str]:
    """The browse a cell showed: its HTML, the rows of its text (cells split on runs of spaces, the
    timestamp left out) and its notes."""
    (result,) = reply.of_type("execute_result")
    data = result["content"]["data"]
    lines = data["text/plain"].splitlines()
    rows = [line.split()[:-1] for line in lines[2:] if line[:1].isdigit()]
    notes = "\n".join(
        line for line in lines[1:] if not line[:1].isdigit() and not line.startswith("partition  offset")
    )
    return data["text/html"], rows, notes


def test_browse_shows_a_jobs_input_and_output_on_the_durable_log(kernel: Kernel) -> None:
    fill(kernel, "words", 2, 6)
    job(kernel, "browse-log", "words")
    kernel.run("%samza_run --wait --max-messages 6 --no-dashboard")

    html, rows, _ = shown(kernel.run("%samza_browse log.words --partition 1 --from 1 -n 2"))
    assert "log.words: 2 messages (partition 1 of 2)" in html and "class='samza-browse'" in html
    # Decoded with the stream's serdes (json values, string keys), with the headers.
    assert rows == [["1", "1", "k0", "{'n':", "3}", "i=3"], ["1", "2", "k2", "{'n':", "5}", "i=5"]]
    assert "<td style='padding:0 8px;white-space:nowrap'>{&#x27;n&#x27;: 3}</td>" in html

    # The job's output (a stream only its producer created), by key.
    _, rows, _ = shown(kernel.run("%samza_browse log.words-out --key k1"))
    assert sorted((r[2], r[3] + " " + r[4]) for r in rows) == [("k1", "{'twice': 2}"), ("k1", "{'twice': 8}")]

    _, rows, notes = shown(kernel.run("%samza_browse log.words -n 1"))
    assert [r[:2] for r in rows] == [["0", "0"], ["1", "0"]]
    assert "partition 0: more from offset 1 (-n 1 shown)" in notes

    # While the job runs (its container holds the log open and waits for more), and as more arrive.
    kernel.run("%samza_run --no-dashboard")
    fill(kernel, "words", 2, 8)  # the same 2 partitions, 8 more messages
    eventually(
        lambda: len(kernel.value("SEEN")) == 14, timeout=30, message="the job processed the new messages"
    )
    _, rows, _ = shown(kernel.run("%samza_browse log.words --partition 0 --from 3"))
    assert [r[1] for r in rows] == ["3", "4", "5", "6"]
    kernel.run("%samza_stop")


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("log.words --partition 5", "log.words: --partition 5: the stream has partitions 0..1"),
        ("log.words --from 90", "log.words: --from 90: log.words#0 has offsets 0..6"),
        ("log.words --from x", "log.words: --from x: system 'log': 'x' is not a durable log offset"),
        ("log.nowhere", "log.nowhere: durable log"),
        ("nosystem.words", "nosystem.words: system 'nosystem' is not one of the job's"),
        ("words", "'words' is not system.stream"),
    ],
)
def test_a_bad_stream_partition_or_offset_is_one_line(kernel: Kernel, line: str, says: str) -> None:
    if not kernel.value("'browse-log' in samza.runs"):
        test_browse_shows_a_jobs_input_and_output_on_the_durable_log(kernel)
    reply = kernel.run(f"%samza_browse {line}", check=False)
    assert reply.status == "error"
    assert reply.error.startswith(f"NotebookError: samza_browse: {says}"), reply.error
    assert "Traceback" not in reply.stdout + reply.stderr


def test_a_failed_jobs_cell_links_its_failing_message_to_browse_and_to_the_replay_reaching_it(
    kernel: Kernel,
) -> None:
    fill(kernel, "orders", 1, 8)
    job(kernel, "browse-fail", "orders", fail_at=5)
    recording = kernel.value("ROOT") + "/recording"
    reply = kernel.run(f"%samza_run --wait --record {recording} --no-dashboard", check=False)
    assert reply.status == "error"
    assert "job 'browse-fail' failed after" in reply.error
    # Partition 0 offset 5 (value 5); the recording dispatched 5 messages before it.
    link = (
        "the failing message log.orders#0@5: %samza_browse log.orders --partition 0 --from 5 -n 1; "
        f"to reach it: %samza_run --replay {recording} --paused, then %samza_step 5: the next %samza_step "
        "processes it"
    )
    assert reply.error.endswith(link), reply.error
    assert kernel.value("SEEN") == [0, 1, 2, 3, 4, 5]

    # The replay and steps of the link reach it: after 5 steps, the next one is the failing message.
    kernel.run(
        "import threading\nfrom samza_nb.config import Config\n"
        "from samza_nb.runtime.local import LocalJobRunner\n"
        "config = {k: v for k, v in samza.runs['browse-fail'].job.config.items() if k != 'job.record.path'}\n"
        f"replay = LocalJobRunner(Config(config), Copy, replay={recording!r})\n"
        "replay.pause()\nfailed = []\n"
        "def run():\n    try:\n        replay.run(timeout=60)\n"
        "    except Exception as exc:\n        failed.append(exc)\n"
        "thread = threading.Thread(target=run)\nthread.start()\n"
        "before = [f'{s.ssp}@{s.offset}' for s in replay.step(5, timeout=30)]\n"
        "next_one = replay.peek(timeout=30)"
    )
    assert kernel.value("before") == [f"log.orders#0@{i}" for i in range(5)]
    assert kernel.value("f'{next_one.ssp}@{next_one.offset}'") == "log.orders#0@5"
    kernel.run("replay.resume()\nthread.join(30)")
    assert kernel.value("[str(e) for e in failed]")[0].startswith(
        "task 'Partition 0' failed in process at log.orders#0 offset 5"
    )

    # The browse line of the link shows that message.
    _, rows, _ = shown(kernel.run("%samza_browse log.orders --partition 0 --from 5 -n 1"))
    assert rows == [["0", "5", "k2", "{'n':", "5}", "i=5"]]


def test_a_failed_jobs_dashboard_links_its_failing_message(kernel: Kernel) -> None:
    fill(kernel, "payments", 2, 8)
    job(kernel, "browse-dash", "payments", fail_at=3)
    kernel.run("%samza_run")  # in the background, with its widgets dashboard
    eventually(lambda: kernel.value("samza.run.done"), timeout=30, message="the job failed")
    dashboard = "samza.dashboard.header.value + samza.dashboard.body.value"
    eventually(lambda: "samza-error" in kernel.value(dashboard), timeout=30, message="the dashboard tells it")
    shown_html = kernel.value(dashboard)
    assert "the failing message log.payments#1@1: %samza_browse log.payments --partition 1 --from 1 -n 1" in (
        shown_html
    ), shown_html
    assert "to reach it: %samza_run --paused, then %samza_step until log.payments#1@1" in shown_html
