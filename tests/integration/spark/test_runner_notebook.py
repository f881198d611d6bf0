"""``%samza_run --runner spark`` in IPython: the job coordinator in the kernel, the containers as the tasks
of one Spark job on the kernel's SparkSession; a ``%%samza_task`` cell runs in the container processes
(the driver's sys.path reaches them) and the view shows each container's tasks."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.spark.test_runner import LINES, STREAMS, expected_lines, file_job, recorded
from tests.requirements import require

os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")  # as tests/notebook: jupyter_core's warning otherwise
require("IPython", "the notebook layer needs IPython (samza_nb[notebook])")

from IPython.testing import globalipapp  # noqa: E402

from samza_nb.notebook.magics.registration import SamzaMagics  # noqa: E402

TASK_CELL = """
import os
from samza_nb import StreamTask

class Lines(StreamTask):
    def init(self, context):
        self.out = open(context.config.get_str("test.record"), "a")
        self.task = context.task_name.replace(" ", "_")
    def process(self, envelope, collector, coordinator):
        self.out.write(f"{self.task} {os.getpid()} {envelope.offset} {envelope.message}\\n")
        self.out.flush()
    def close(self):
        self.out.close()
"""


@pytest.fixture
def magics() -> Iterator[SamzaMagics]:
    shell = globalipapp.get_ipython()
    instance = SamzaMagics(shell, dashboard="text")
    shell.register_magics(instance)
    yield instance
    instance.close()


def test_samza_run_with_the_spark_runner_runs_a_task_cell_in_two_containers(
    spark: Any, magics: SamzaMagics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shell = magics.shell
    assert shell is not None
    config = {k: v for k, v in file_job(tmp_path).items() if k != "task.class"}
    cell = "".join(f"{k} = {v}\n" for k, v in config.items())
    assert shell.run_cell("%%samza_config\n" + cell, store_history=False).error_in_exec is None
    assert shell.run_cell("%%samza_task\n" + TASK_CELL, store_history=False).error_in_exec is None
    result = shell.run_cell("%samza_run --runner spark --wait", store_history=False)
    out = capsys.readouterr().out
    assert result.error_in_exec is None, out
    assert Counter(m for *_, m in recorded(tmp_path)) == Counter(expected_lines())
    view = magics.session.view
    assert view is not None and view.processed == len(STREAMS) * LINES
    assert view.mode.startswith("as 2 Spark tasks")
    assert [(c.container_id, c.state, len(c.tasks)) for c in view.containers] == [
        ("0", "stopped", 2),
        ("1", "stopped", 2),
    ]
    assert len({c.pid for c in view.containers}) == 2
    assert len(view.tasks) == 4 and all(t.processed == LINES for t in view.tasks)
    assert f"job '{config['job.name']}' finished: {len(STREAMS) * LINES} messages" in out, out
