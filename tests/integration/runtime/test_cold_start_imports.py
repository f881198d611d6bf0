"""What ``samza-nb run`` of a file-system job loads before its first message: none of the heavy optional
libraries (DuckDB, pandas, pyarrow, aiokafka, Spark, the notebook's widgets). The first run's first commit
creates the checkpoint file (with DuckDB); the next run resumes from it. Real processes of this
repository's code (benchmarks/cold_start.py measures the time)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

HEAVY = ("duckdb", "pandas", "pyarrow", "aiokafka", "pyspark", "ipywidgets")

TASK = f"""
import json
import sys

HEAVY = {HEAVY!r}


class Task:
    \"\"\"Writes which of HEAVY were loaded when its first message came.\"\"\"

    first = True

    def process(self, envelope, collector, coordinator):
        if Task.first:
            Task.first = False
            with open("loaded.json", "w") as out:
                json.dump(sorted(name for name in HEAVY if name in sys.modules), out)
"""

CONFIG = """job.name = cold
task.class = coldtask.Task
task.inputs = file.lines
systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
systems.file.streams.lines.path = in.txt
systems.file.samza.offset.default = oldest
job.logged.store.base.dir = state
"""


def python(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, *args], cwd=workdir, capture_output=True, text=True, timeout=120, env=env
    )


def append_lines(path: Path, start: int, count: int) -> None:
    with path.open("a") as file:
        file.writelines(f"line {i}\n" for i in range(start, start + count))


def test_importing_the_command_line_loads_none_of_the_heavy_libraries(tmp_path: Path) -> None:
    done = python(
        tmp_path,
        "-c",
        "import json, sys\nimport samza_nb.runtime.cli\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_a_file_system_job_reaches_its_first_message_without_them_and_a_rerun_resumes(tmp_path: Path) -> None:
    (tmp_path / "coldtask.py").write_text(TASK)
    (tmp_path / "job.properties").write_text(CONFIG)
    append_lines(tmp_path / "in.txt", 0, 10)
    run = ("-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress")

    first = python(tmp_path, *run)
    assert first.returncode == 0, first.stderr
    assert json.loads((tmp_path / "loaded.json").read_text()) == []
    assert "processed 10 messages" in first.stdout
    assert (tmp_path / "state" / "cold-1" / "samza.duckdb").is_file()  # created by the first commit

    append_lines(tmp_path / "in.txt", 10, 5)
    second = python(tmp_path, *run)
    assert second.returncode == 0, second.stderr
    assert "processed 5 messages" in second.stdout  # resumed after the first run's checkpoint
    assert re.search(r"file\.lines#0=14\b", second.stdout), second.stdout
