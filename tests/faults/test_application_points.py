"""Crash points of an application: lines of two files are repartitioned through an intermediate stream of
two partitions (partition_by) into event-time tumbling windows counted per key, whose panes go to a file.
The producer's end-of-stream, a window's firing; after the restart every pane is
there with its exact count (duplicates allowed: output is at-least-once) and the job stops by itself.

The job uses the default grouper (one producer task): with ``group-by-ssp`` in one job on the durable log,
the intermediate stream's consumer tasks never receive anything (a bug outside these cases, noted for an
issue)."""

from __future__ import annotations

import collections
import textwrap
from pathlib import Path

import pytest

from tests.faults.harness import RUNS, SAMZA_NB, Outcome, record, run_killed_at, run_to_completion

APP = """
from samza_nb.operators import StreamApplication, Windows


def event_time(kv):
    return int(kv.value[1:])


class Panes(StreamApplication):
    \"\"\"Lines a<n> and b<n> (event time n) by their letter, counted in tumbling windows of 100.\"\"\"

    def describe(self, app):
        lines = app.get_input_stream("a").merge(app.get_input_stream("b"))
        keyed = lines.partition_by(lambda line: line[0], op_id="by-key")
        window = Windows.tumbling(
            100, lambda: 0, lambda kv, n: n + 1, key_fn=lambda kv: kv.key, timestamp_fn=event_time
        )
        panes = keyed.window(window, "counts")
        text = panes.map(lambda pane: f"{pane.key} {pane.start_ms} {pane.value}")
        text.send_to(app.get_output_stream("out"))
"""

CONFIG = {
    "app.class": "panes_app.Panes",
    "job.name": "panes",
    "systems.files.samza.factory": "samza_nb.systems.file.FileSystemFactory",
    "systems.files.streams.a.path": "a.txt",
    "systems.files.streams.b.path": "b.txt",
    "systems.files.samza.offset.default": "oldest",
    "streams.a.samza.system": "files",
    "streams.b.samza.system": "files",
    "streams.out.samza.system": "files",
    "job.logged.store.base.dir": "state",
    "job.intermediate.stream.partitions": "2",
    "task.commit.ms": "20",
}
A, B = 500, 300

# point -> the arrival that is fatal
CASES = {
    "control.end-of-stream-sent": 1,
    "window.mid-fire": 2,
    "window.fired": 1,
}
COVERED = tuple(CASES)


def expected_panes() -> set[str]:
    counts = collections.Counter(
        (letter, n // 100 * 100) for letter, count in (("a", A), ("b", B)) for n in range(count)
    )
    return {f"{letter} {start} {count}" for (letter, start), count in counts.items()}


def write_application(directory: Path) -> list[str]:
    (directory / "panes_app.py").write_text(textwrap.dedent(APP))
    (directory / "a.txt").write_text("".join(f"a{n}\n" for n in range(A)))
    (directory / "b.txt").write_text("".join(f"b{n}\n" for n in range(B)))
    (directory / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in CONFIG.items()))
    return [*SAMZA_NB, "run", "--config-path", "job.properties", "--no-progress", "--timeout", "60"]


@pytest.mark.parametrize("point", COVERED)
def test_a_crash_at_the_point_then_every_pane_exactly_and_the_job_stops(tmp_path: Path, point: str) -> None:
    for run in range(RUNS):
        directory = tmp_path / f"run-{run}"
        directory.mkdir()
        command = write_application(directory)
        run_killed_at(command, directory, point, at=CASES[point])
        output = run_to_completion(command, directory)
        assert "--timeout" not in output, f"the restarted job did not stop by itself: {output}"
        out = directory / "output" / "out.txt"
        panes = collections.Counter(out.read_text().splitlines() if out.exists() else [])
        expected = expected_panes()
        outcome = Outcome(
            point=point,
            scenario="partition_by into event-time tumbling windows, panes to a file",
            messages=A + B,
            lost=len(expected - set(panes)),
            duplicates=sum(panes.values()) - len(panes),
            exact=set(panes) == expected,
            guarantee="every pane with its exact count, at-least-once output",
        )
        record(outcome)
        assert outcome.lost == 0 and outcome.exact, (outcome, sorted(panes))
