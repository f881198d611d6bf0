"""``%%samza_app``: a StreamApplication defined in a cell, planned and run by ``%samza_run``; the status
shows each task's input watermarks (its event time) and the end-of-stream count of the intermediate
partitions."""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from samza_nb.control import WatermarkMessage
from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker

from .helpers import error_line, run

APP = """%%samza_app
from samza_nb.operators import StreamApplication, Windows

class Counts(StreamApplication):
    def describe(self, app):
        (app.get_input_stream("clicks")
            .partition_by(lambda v: v["user"], None, "by-user")
            .window(Windows.tumbling(10, init=lambda: 0, fold=lambda kv, n: n + 1,
                                     key_fn=lambda kv: kv.key), "counts")
            .map(lambda pane: (pane.key, pane.start_ms, pane.value))
            .send_to(app.get_output_stream("counts")))
"""


def app_config(broker: InMemoryBroker) -> str:
    system = broker.namespace
    return (
        "%%samza_config\n"
        "job.name = clicks\n"
        f"systems.{system}.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
        f"systems.{system}.samza.offset.default = oldest\n"
        f"job.default.system = {system}\n"
    )


def fill_clicks(broker: InMemoryBroker) -> None:
    """Two partitions of clicks with event times, a source watermark on each, then end-of-stream."""
    broker.create_stream("clicks", 2)
    for i in range(20):
        broker.send("clicks", {"user": f"u{i % 3}"}, partition=i % 2, timestamp=i)
    broker.send("clicks", WatermarkMessage(timestamp=25), partition=0)
    broker.send("clicks", WatermarkMessage(timestamp=12), partition=1)
    broker.end_stream("clicks")


def test_an_app_cell_runs_through_partition_by_and_stops_by_itself(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: Any
) -> None:
    fill_clicks(broker)
    run(shell, app_config(broker))
    defined = run(shell, APP)
    assert defined.success, defined.error_in_exec
    assert "application Counts defined" in capsys.readouterr().out
    assert run(shell, "%samza_run --wait").success
    out = capsys.readouterr().out
    assert "finished" in out
    panes = [v for values in broker.read("counts").values() for v in values]
    counted: dict[tuple[str, int], int] = {}
    for i in range(20):
        key = (f"u{i % 3}", i // 10 * 10)
        counted[key] = counted.get(key, 0) + 1
    assert sorted(panes) == sorted((user, start, n) for (user, start), n in counted.items())
    view = magics.session.view
    assert view is not None
    # Source watermarks 25 and 12: the tasks' input partitions of "clicks" reached them; the intermediate
    # stream's watermark is the minimum over both producers in both tasks.
    time = view.time
    assert time is not None
    marks = {(p.task, p.ssp.stream): p.watermark for p in time.partitions}
    assert marks[("Partition 0", "clicks")] == 25 and marks[("Partition 1", "clicks")] == 12
    intermediate = "clicks-1-partition_by-by-user"
    assert marks[("Partition 0", intermediate)] == marks[("Partition 1", intermediate)] == 12
    # Each task's watermark of an input stream (the minimum over its partitions) is its input operator's.
    inputs = {(o.task, o.op_id): o.input_watermark for o in time.operators if o.kind == "input"}
    assert inputs[("Partition 0", "input:clicks")] == 25 and inputs[("Partition 1", "input:clicks")] == 12
    assert inputs[("Partition 0", "by-user:input")] == inputs[("Partition 1", "by-user:input")] == 12
    # view.watermarks, by task and stream, says the same.
    streams = {(w.task, w.system_stream.stream): w.watermark for w in view.watermarks}
    assert streams == {
        ("Partition 0", "clicks"): 25,
        ("Partition 0", intermediate): 12,
        ("Partition 1", "clicks"): 12,
        ("Partition 1", intermediate): 12,
    }
    ends = {(e.task, e.ssp.partition): e for e in view.end_of_stream}
    assert all(e.ended and e.producers_expected == 2 for e in ends.values())
    # The intermediate partitions ended by control messages: the partition table says so too.
    assert all(p.ended for p in view.partitions) and len(view.partitions) == 4
    assert "event time:" in out and "end-of-stream of intermediate partitions:" in out
    assert "event-time watermarks" not in out  # the event time section has them: no second table


def test_an_app_cell_without_an_application_is_one_line(
    shell: InteractiveShell, magics: SamzaMagics, capsys: Any
) -> None:
    result = run(shell, "%%samza_app\nclass NotAnApp:\n    pass\n")
    assert "the cell defines no application" in error_line(result, capsys)


def test_a_split_application_is_refused_in_the_notebook(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: Any
) -> None:
    fill_clicks(broker)
    run(shell, app_config(broker) + "app.split.jobs = true\n")
    run(shell, APP)
    capsys.readouterr()
    result = run(shell, "%samza_run --wait")
    assert "runs as 2 jobs (app.split.jobs)" in error_line(result, capsys)


def test_an_app_whose_input_was_made_anew_makes_its_in_memory_streams_anew_too(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: Any
) -> None:
    """Run All twice: the data cell makes the input anew, and the application's intermediate and output
    streams are made anew with it (a new generation), so the second run's outputs are the first's."""
    run(shell, app_config(broker))
    assert run(shell, APP).success
    panes = []
    for _ in range(2):
        broker.create_stream("clicks", 2, replace=True)  # the data cell, as the README's writes it
        fill_clicks(broker)
        assert run(shell, "%samza_run --wait").success
        panes.append(sorted(v for values in broker.read("counts").values() for v in values))
    assert panes[1] == panes[0], "the second run's outputs are the first's, not added to them"
    assert sum(n for _, _, n in panes[1]) == 20
    assert (
        f"its streams {broker.namespace}.clicks-1-partition_by-by-user, {broker.namespace}.counts are made "
        "anew too" in capsys.readouterr().out
    )
