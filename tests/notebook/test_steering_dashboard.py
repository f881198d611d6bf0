"""The dashboard's Pause / Step / Resume buttons and concurrency slider, headless (ipywidgets' DummyComm)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually
from tests.requirements import require

from .helpers import config_cell, fill, run

require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

SEEING = """%%samza_task
class Seeing:
    def process(self, envelope, collector, coordinator):
        DASH_SEEN.append(envelope.message)
"""


@pytest.fixture
def widget_magics(shell: InteractiveShell) -> Iterator[SamzaMagics]:
    instance = SamzaMagics(shell, dashboard="widgets", refresh_interval=0.05)
    shell.register_magics(instance)
    yield instance
    instance.close()


def test_buttons_pause_step_and_resume_and_the_slider_sets_concurrency(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    seen: list[int] = []
    shell.push({"DASH_SEEN": seen})
    fill(broker, "in", 2, 4, end=False)
    run(shell, config_cell(broker, "in", job="buttons", task_max_concurrency=2))
    run(shell, SEEING)
    assert run(shell, "%samza_run").success
    try:
        eventually(lambda: len(seen) == 4, timeout=10, message="4 processed")
        dashboard = widget_magics.session.dashboard
        assert dashboard is not None and dashboard.controls is not None
        controls = dashboard.controls
        assert controls.slider.value == 2
        controls.pause_button.click()
        eventually(lambda: controls.commands == 1, timeout=10, message="the pause done")
        assert "paused" in controls.note.value
        eventually(lambda: "samza-paused" in dashboard.header.value, timeout=10, message="header: paused")
        eventually(lambda: not controls.step_button.disabled, timeout=10, message="Step enabled")
        assert controls.pause_button.disabled
        eventually(lambda: "next: nothing buffered" in controls.note.value, timeout=10, message="drained")
        for i in range(4, 8):
            broker.send("in", i, partition=i % 2)
        # While nothing is buffered the dashboard asks again at each render, until input comes.
        eventually(lambda: "next: Partition " in controls.note.value, timeout=10, message="next shown")
        shown = re.search(r"next: (Partition \d) · (\S+@\d+) · (\d+) · why: ([^<]*)", controls.note.value)
        assert shown is not None, controls.note.value
        controls.step_button.click()
        eventually(lambda: controls.commands == 2, timeout=10, message="the step done")
        assert len(seen) == 5  # exactly one: the job stays paused
        assert seen[-1] == int(shown.group(3)), "the step processed the message the dashboard showed next"
        assert f"stepped: {shown.group(1)} · {shown.group(2)}" in controls.note.value
        assert "round robin" in controls.note.value
        controls.slider.value = 4
        eventually(lambda: controls.commands == 3, timeout=10, message="the knob set")
        assert "task.max.concurrency = 4" in controls.note.value
        controls.resume_button.click()
        eventually(lambda: len(seen) == 8, timeout=10, message="the rest processed after Resume")
        eventually(lambda: "samza-paused" not in dashboard.header.value, timeout=10, message="not paused")
    finally:
        run(shell, "%samza_stop")
    assert controls.slider.disabled and controls.pause_button.disabled


def test_a_job_with_stream_priorities_shows_a_field_per_stream_that_sets_it_live(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    seen: list[int] = []
    shell.push({"DASH_SEEN": seen})
    fill(broker, "in", 1, 2, end=False)
    fill(broker, "side", 1, 2, end=False)
    system = broker.namespace
    priorities = {
        f"systems_{system}_streams_in_samza_priority": 1,
        f"systems_{system}_streams_side_samza_priority": 0,
    }
    run(shell, config_cell(broker, "in", "side", job="tiers", **priorities))
    run(shell, SEEING)
    assert run(shell, "%samza_run").success
    try:
        eventually(lambda: len(seen) == 4, timeout=10, message="4 processed")
        dashboard = widget_magics.session.dashboard
        assert dashboard is not None and dashboard.controls is not None
        controls = dashboard.controls
        eventually(lambda: len(controls.priorities.children) == 2, timeout=10, message="priority fields")
        by_name = {field.description: field for field in controls.priorities.children}
        assert by_name["in priority"].value == 1 and by_name["side priority"].value == 0
        by_name["side priority"].value = 7
        eventually(lambda: controls.commands == 1, timeout=10, message="the priority set")
        assert f"systems.{system}.streams.side.samza.priority = 7" in controls.note.value
        job = widget_magics.session.job("tiers")
        assert job.set({})[f"systems.{system}.streams.side.samza.priority"] == "7"
    finally:
        run(shell, "%samza_stop")
    assert all(field.disabled for field in controls.priorities.children)


def test_a_job_run_paused_processes_nothing_and_its_controls_show_the_values_set_in_cells(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    seen: list[int] = []
    shell.push({"DASH_SEEN": seen})
    fill(broker, "in", 1, 3, end=False)
    fill(broker, "side", 1, 3, end=False)
    system = broker.namespace
    priorities = {f"systems_{system}_streams_in_samza_priority": 1}
    run(shell, config_cell(broker, "in", "side", job="paused", **priorities))
    run(shell, SEEING)
    assert run(shell, "%samza_run --paused").success
    try:
        dashboard = widget_magics.session.dashboard
        assert dashboard is not None and dashboard.controls is not None
        controls = dashboard.controls
        # Started paused: the dashboard says so and shows the next message (the peek waited for the start:
        # no stale "has not started" line), and not one message was processed.
        eventually(lambda: "samza-paused" in dashboard.header.value, timeout=10, message="header: paused")
        eventually(lambda: "next: Partition 0 · " in controls.note.value, timeout=10, message="next shown")
        assert "has not started" not in controls.note.value
        assert seen == []
        peeked = run(shell, "%samza_peek").result
        assert peeked.next is not None and peeked.next.ssp.stream == "in", peeked
        assert "why chosen" in str(peeked) and "processes this message first" in str(peeked)
        steps = run(shell, "%samza_step 1").result
        assert [(s.ssp, s.offset) for s in steps.steps] == [(peeked.next.ssp, peeked.next.offset)]
        assert len(seen) == 1

        # %samza_set in a cell: the slider and the priority field show the values in force.
        eventually(lambda: len(controls.priorities.children) == 2, timeout=10, message="priority fields")
        assert run(shell, f"%samza_set task.max.concurrency=5 systems.{system}.streams.side.samza.priority=3")
        eventually(lambda: controls.slider.value == 5, timeout=10, message="the slider at 5")
        by_name = {field.description: field for field in controls.priorities.children}
        eventually(lambda: by_name["side priority"].value == 3, timeout=10, message="the side field at 3")
        assert controls.commands == 0, "showing the values in force set nothing again"
        assert widget_magics.session.job("paused").set({})["task.max.concurrency"] == "5"
        run(shell, "%samza_resume")
        eventually(lambda: len(seen) == 6, timeout=10, message="the rest processed after the resume")
        eventually(lambda: "next:" not in controls.note.value, timeout=10, message="the next line cleared")
    finally:
        run(shell, "%samza_stop")


def test_run_paused_refuses_wait_in_one_line(
    shell: InteractiveShell, widget_magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 1)
    run(shell, config_cell(broker, "in", job="never"))
    run(shell, SEEING)
    result = run(shell, "%samza_run --paused --wait")
    assert not result.success
    assert "a paused job would never end" in str(result.error_in_exec)
