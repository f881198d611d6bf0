"""What an executor's Python worker imports to start a container (:mod:`samza_nb.runtime.spark.task`):
nothing of the driver's side (the runner, the coordinator, the container, the Spark system's factory and
sink), which it would import only to start a child process that imports them itself (it was ~0.5 s of
each container's launch); and the names the task copies instead of importing agree with their homes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

DRIVER_SIDE = (
    "samza_nb.runtime.spark.runner",
    "samza_nb.runtime.local",
    "samza_nb.coordinator",
    "samza_nb.container",
    "samza_nb.systems.spark.factory",
    "samza_nb.systems.spark.outputs.sink",
    "asyncio",
    "pyspark",
)


def test_a_python_worker_imports_none_of_the_drivers_side_to_start_a_container() -> None:
    probe = (
        "import json, sys; import samza_nb.runtime.spark.task; "
        f"print(json.dumps(sorted(m for m in {DRIVER_SIDE!r} if m in sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_names_the_task_copies_agree_with_their_homes() -> None:
    from samza_nb.coordinator import client
    from samza_nb.observe.states import ContainerState
    from samza_nb.runtime.spark import task

    assert (task.URL_ENV, task.ID_ENV, task.TOKEN_ENV) == (client.URL_ENV, client.ID_ENV, client.TOKEN_ENV)
    assert ContainerState.STOPPED.value == task.STOPPED


def test_the_runtime_packages_still_give_their_names() -> None:
    from samza_nb.runtime import LocalJobRunner, Step
    from samza_nb.runtime.local import LocalJobRunner as Local
    from samza_nb.runtime.spark import SparkJobRunner
    from samza_nb.runtime.spark.runner import SparkJobRunner as Runner

    assert (LocalJobRunner, SparkJobRunner) == (Local, Runner)
    assert Step is not None
