"""The dashboard's widget state, headless (ipywidgets' DummyComm: no front-end), during and after runs."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import aeventually, eventually
from tests.requirements import require

from .helpers import config_cell, fill, run

require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

HOLDING = """%%samza_task
class Holding:
    held = []
    def process_async(self, envelope, collector, coordinator, callback):
        Holding.held.append(callback)
"""


@pytest.fixture
def widget_magics(shell: InteractiveShell) -> Iterator[SamzaMagics]:
    instance = SamzaMagics(shell, dashboard="widgets", refresh_interval=0.05)
    shell.register_magics(instance)
    yield instance
    instance.close()


def test_widget_state_after_a_run(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 2, 100)
    run(shell, config_cell(broker, "in", task_max_concurrency=3))
    run(shell, "%%samza_task\nclass Pass:\n    async def process(self, e, c, k):\n        pass\n")
    assert run(shell, "%samza_run --wait").success
    dashboard = widget_magics.session.dashboard
    assert dashboard is not None
    assert sorted(dashboard.task_rows) == ["Partition 0", "Partition 1"]
    for row in dashboard.task_rows.values():
        assert (row.in_flight, row.max_concurrency, row.processed, row.phase) == (0, 3, 50, "done")
    body = dashboard.body.value
    assert body.count("<div class='samza-task-row'") == 2
    assert "data-task='Partition 1'" in body and "style='display:block;width:0%;" in body
    details = re.findall(r"<span class='samza-task-detail'>([^<]*)</span>", body)
    assert len(details) == 2
    assert all(re.fullmatch(r"0/3 in flight · 50 processed · peak [123]/3 · done", d) for d in details), (
        details
    )
    assert "samza-body" in dashboard.body._dom_classes
    header = dashboard.header.value
    assert "<span class='samza-processed'><b>100</b> processed</span>" in header
    assert ">finished</span>" in header and "avg " in header and " msg/s now" not in header
    partitions = body[body.index("samza-partitions") : body.index("samza-decisions")]
    td = "<td style='padding:0 8px;white-space:nowrap'>"
    for partition in (0, 1):
        assert f"{td}{broker.namespace}.in#{partition}</td>{td}50</td>" in partitions  # processed: a count
    assert (
        f"<tr style='font-weight:bold'>{td}{broker.namespace}.in (2 partitions)</td>{td}100</td>"
        in partitions
    )
    assert partitions.count(f"{td}49</td>") == 6  # last offset, committed, head x 2
    assert partitions.count(f"{td}yes</td>") == 3  # end-of-stream: both partitions and the stream
    assert "checkpoints (2 written" in body
    assert "recent chooser decisions" in body
    assert "samza-error" not in header
    assert dashboard.stop_button is not None and dashboard.stop_button.disabled  # the job ended
    bundle = dashboard._repr_mimebundle_()  # the job ended: a static snapshot (a saved notebook shows it)
    assert "application/vnd.jupyter.widget-view+json" not in bundle and dashboard.closed
    assert bundle["text/html"].startswith("<div class='samza-dashboard samza-snapshot samza-snapshot-")
    assert "<span class='samza-processed'><b>100</b> processed</span>" in bundle["text/html"]
    assert bundle["text/plain"].startswith("job 'nbjob' — finished (on its own thread) · 100 processed")


def test_in_flight_callbacks_against_max_concurrency_live(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 10, end=False)
    run(shell, config_cell(broker, "in", task_max_concurrency=4))
    run(shell, HOLDING)
    session = widget_magics.session
    held: list[Any] = shell.user_ns["Holding"].held

    async def notebook() -> None:
        assert run(shell, "%samza_run").success
        assert await session.until(lambda view: view.in_flight == 4, timeout=10)
        dashboard = session.dashboard
        assert dashboard is not None
        # The monitor renders on its timer: wait until it rendered what the job shows.
        await aeventually(  # (no row before the first render: a busy machine gets there later)
            lambda: (row := dashboard.task_rows.get("Partition 0")) is not None and row.in_flight == 4,
            timeout=10,
        )
        await aeventually(lambda: "4/4 in flight" in dashboard.body.value, timeout=10)
        assert "width:100%;" in dashboard.body.value
        assert "<span class='samza-task-detail'>4/4 in flight · " in dashboard.body.value

        def complete_held(view: Any) -> bool:  # the job, on its thread, holds the next ones meanwhile
            while held:
                held.pop(0).complete()
            return bool(view.processed == 10)

        assert await session.until(complete_held, timeout=10)
        await aeventually(lambda: "0/4 in flight · 10 processed" in dashboard.body.value, timeout=10)
        assert "width:0%;" in dashboard.body.value and "0/4 in flight · 10 processed" in dashboard.body.value
        assert dashboard.stop_button is not None
        dashboard.stop_button.click()
        assert dashboard.stop_button.disabled
        await session.wait(timeout=10)

    asyncio.run(notebook())
    assert session.run is not None and session.run.outcome == "stopped"
    dashboard = session.dashboard
    assert dashboard is not None
    assert ">stopped</span>" in dashboard.header.value
    assert "<span class='samza-processed'><b>10</b> processed</span>" in dashboard.header.value


BOOM = "%%samza_task\nclass Boom:\n    def process(self, e, c, k):\n        raise KeyError('no user')\n"


def test_a_failure_in_the_background_is_one_red_line_of_the_dashboard(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 3)
    run(shell, config_cell(broker, "in"))
    run(shell, BOOM)
    run(shell, "%samza_run")
    session = widget_magics.session
    eventually(lambda: session.run is not None and session.run.done, timeout=10)
    assert session.updater.flush()
    dashboard = session.dashboard
    assert dashboard is not None
    assert ">failed</span>" in dashboard.header.value
    error = "<div class='samza-error' style='color:var(--jp-error-color1, #b00)'>"
    assert dashboard.header.value.count(error) == 1 and "no user" in dashboard.header.value
    assert "line 4 of the %%samza_task cell" in dashboard.header.value  # the line the next cell would show
    assert session.report_failures() == []  # the dashboard told it: not the next cell again


def test_a_failure_a_cell_waits_for_is_told_by_the_cell_only(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 3)
    run(shell, config_cell(broker, "in"))
    run(shell, BOOM)
    result = run(shell, "%samza_run --wait")
    assert "no user" in str(result.error_in_exec)
    dashboard = widget_magics.session.dashboard
    assert dashboard is not None
    assert ">failed</span>" in dashboard.header.value and "no user" not in dashboard.header.value


def test_text_mode_prints_the_final_status(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 4)
    run(shell, config_cell(broker, "in"))
    run(shell, "%%samza_task\nclass Pass:\n    def process(self, e, c, k):\n        pass\n")
    capsys.readouterr()
    run(shell, "%samza_run --wait")
    out = capsys.readouterr().out
    assert (
        "task         in flight  peak  processed  oldest in flight  checkpointed  phase\n"
        "Partition 0  0/1        1/1   4          —                 —             done"
    ) in out
    assert f"{broker.namespace}.in#0  4          3            3          3     0    yes" in out
    assert "(avg " in out and "msg/s)" in out
    capsys.readouterr()
    run(shell, "%samza_run --wait --no-dashboard")
    assert capsys.readouterr().out.count("\n") == 1  # --no-dashboard: the outcome line only


def test_two_named_jobs_each_have_a_live_dashboard_of_their_own(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 7, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, "%%samza_task\nclass Pass:\n    def process(self, e, c, k):\n        pass\n")
    session = widget_magics.session
    assert run(shell, "%samza_run --name upstream").success
    first = session.dashboard
    assert run(shell, "%samza_run --name downstream").success
    second = session.dashboard
    assert first is not None and second is not None and first is not second
    assert session.updater.watching == 2  # one thread keeps both moving
    eventually(lambda: "<b>7</b> processed" in first.header.value, timeout=10)
    eventually(lambda: "<b>7</b> processed" in second.header.value, timeout=10)
    assert "job upstream" in first.header.value and "job downstream" in second.header.value
    run(shell, "%samza_stop upstream")
    eventually(lambda: first.closed, timeout=10, message="the first dashboard's snapshot")
    assert not second.closed and session.updater.watching == 1
    run(shell, "%samza_stop")
    assert second.closed and session.updater.watching == 0
