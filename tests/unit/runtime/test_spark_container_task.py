"""A container of the Spark runner's job that fails by its config (exit status 2) or by a bad message (3)
would fail again in every attempt: its task reports the failure instead of raising, so Spark does not retry
it and the driver fails the job at once with its line; any other failure raises (Spark retries it)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from samza_nb.runtime.spark.task import FAILED_MARK, ContainerAttemptFailed, run_container


def fake_python(tmp_path: Path, line: str, status: int) -> str:
    """An "interpreter" that prints ``line`` on stderr and exits with ``status`` (what a container does)."""
    script = tmp_path / f"python-{status}"
    script.write_text(f"#!/bin/sh\necho '{line}' >&2\nexit {status}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return str(script)


@pytest.mark.parametrize("status", [2, 3])
def test_a_container_that_would_fail_again_is_reported_not_retried(tmp_path: Path, status: int) -> None:
    line = "samza-nb: error: task.class=pipeline.task.Shouted cannot be imported: no module pipeline"
    executable = fake_python(tmp_path, line, status)
    cid, result = run_container(executable, "http://127.0.0.1:1", "0", [], str(tmp_path))
    assert cid == "0" and result.startswith(FAILED_MARK)
    assert "cannot be imported" in result and f"exited with status {status}" in result


def test_any_other_failure_raises_so_spark_retries_it(tmp_path: Path) -> None:
    executable = fake_python(tmp_path, "samza-nb: error: the broker went away", 1)
    with pytest.raises(ContainerAttemptFailed, match="the broker went away"):
        run_container(executable, "http://127.0.0.1:1", "0", [], str(tmp_path))
