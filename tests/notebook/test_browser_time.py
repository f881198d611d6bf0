"""The dashboard's event time section and its steering controls in a real browser at 1,280 px (JupyterLab,
and Notebook 7 when installed; see :mod:`.browser` for when this runs):

- the idle-partition case: partition 1 of a ``partition_by`` job stops sending while partition 0 goes on;
  the event time section names ``clicks#1`` as holding back the watermark, and lists the open windows with
  what they wait on; at 1,200, 1,280 and 1,400 px every table of the section is whole (no column cut: long
  names and notes wrap), and the old "event-time watermarks" table is gone (the section has them);
- a job started with ``%samza_run --paused`` whose knobs a cell changes with ``%samza_set``: its controls
  show the values in force (the slider at 6 with its readout, the stream's priority field at 4), every
  control keeps its width (the slider is no dot, no priority field is cut, "Resume" is whole), and the
  next-message line shows no stale "has not started" error.

Screenshots: tests/notebook/artifacts/time-<front-end>-<moment>.png (the event time section at 1,280 and
1,200 px, the controls).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from tests.eventually import eventually

from .browser import ARTIFACTS, front_end, launch, open_notebook, run_all, write_notebook

__all__ = ["front_end"]  # the fixture, imported for pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "%load_ext samza_nb",
    # The idle-partition case: both partitions at 1,000 ms of event time, then only partition 0 goes on.
    "from samza_nb.control import WatermarkMessage\n"
    "from samza_nb.systems.inmemory.system import InMemoryBroker\n"
    "InMemoryBroker.drop('browser-idle')\n"
    "idle = InMemoryBroker.named('browser-idle', 'demo')\n"
    "idle.create_stream('clicks', 2)\n"
    "event_time = {0: 0, 1: 0}\n"
    "def click(partition, n):\n"
    "    for i in range(n):\n"
    "        event_time[partition] += 100\n"
    "        user = {'user': 'abc'[i % 3]}\n"
    "        idle.send('clicks', user, partition=partition, timestamp=event_time[partition])\n"
    "    idle.send('clicks', WatermarkMessage(timestamp=event_time[partition]), partition=partition)\n"
    "click(0, 10)\n"
    "click(1, 10)",
    "%%samza_config\n"
    "job.name = idle\n"
    "systems.demo.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
    "systems.demo.inmemory.namespace = browser-idle\n"
    "systems.demo.samza.offset.default = oldest\n"
    "job.default.system = demo",
    "%%samza_app\n"
    "from samza_nb.operators import StreamApplication, Windows\n"
    "class PerUser(StreamApplication):\n"
    "    def describe(self, app):\n"
    "        (app.get_input_stream('clicks')\n"
    "            .partition_by(lambda click: click['user'], None, 'by-user')\n"
    "            .window(Windows.tumbling(1000, init=lambda: 0, fold=lambda kv, n: n + 1,\n"
    "                                     key_fn=lambda kv: kv.key), 'per-second')\n"
    "            .send_to(app.get_output_stream('counts')))",
    "%samza_run",
    "marks = lambda v: v.time and {p.ssp.partition: p.watermark for p in v.time.partitions "
    "if p.ssp.stream == 'clicks'}\n"
    "assert await samza.until(lambda v: marks(v) == {0: 1000, 1: 1000}, timeout=60)\n"
    "click(0, 30)",
    # A job of two streams with priorities, started paused, its knobs changed in a cell.
    "steering = InMemoryBroker.named('browser-steer')\n"
    "for stream in ('orders', 'refunds'):\n"
    "    steering.create_stream(stream, 1)\n"
    "    for i in range(3):\n"
    "        steering.send(stream, i)",
    "%%samza_config\n"
    "job.name = steer\n"
    "task.inputs = browser-steer.orders,browser-steer.refunds\n"
    "systems.browser-steer.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
    "systems.browser-steer.samza.offset.default = oldest\n"
    "systems.browser-steer.streams.orders.samza.priority = 1",
    "%%samza_task\nclass Nothing:\n    def process(self, envelope, collector, coordinator):\n        pass",
    "%samza_run --paused",
    "%samza_set task.max.concurrency=6 systems.browser-steer.streams.refunds.samza.priority=4",
    # Blocks until the test has looked (the test writes the file).
    "import pathlib, time\n"
    "deadline = time.monotonic() + 600\n"
    "while not pathlib.Path('looked').exists() and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)",
    "%samza_stop",
]


def scroll_to(page: Any, selector: str, index: int = 0, block: str = "center") -> None:
    """Scroll the ``index``-th live element matching ``selector`` into view (sections are re-rendered a
    few times a second: a locator's element may be replaced while Playwright scrolls)."""
    page.evaluate(
        "([s, i, block]) => document.querySelectorAll(s)[i]?.scrollIntoView({block})",
        [f".samza-dashboard:not(.samza-snapshot) {selector}", index, block],
    )


def whole(locator: Any) -> bool:
    """True when the element's content is not cut (nothing overflows it)."""
    return bool(locator.evaluate("e => e.scrollWidth <= e.clientWidth + 1"))


TIME_TABLES = (
    "() => [...document.querySelectorAll("
    "'.samza-dashboard:not(.samza-snapshot) .samza-time .samza-time-box')]"
    ".map(box => [box.firstElementChild.className, box.scrollWidth, box.clientWidth])"
)
"""Each table of the live event time section: its class, and its box's scroll and client widths."""


def cut_time_tables(page: Any) -> list[Any]:
    """The event time section's tables that are not whole (wider than their box: a column cut off); the
    section's three tables must be there."""
    tables = page.evaluate(TIME_TABLES)
    assert [name for name, _, _ in tables] == [
        "samza-time-partitions",
        "samza-time-operators",
        "samza-time-windows",
    ], tables
    return [table for table in tables if table[1] > table[2] + 1]


def test_the_event_time_section_names_the_idle_partition_and_the_controls_fit_at_1280_px(
    front_end: tuple[str, str], tmp_path: Path
) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    name, url = front_end
    write_notebook(tmp_path / "root" / "dashboard.ipynb", CELLS)
    ARTIFACTS.mkdir(exist_ok=True)
    moments = ("idle-partition", "idle-partition-1200px", "controls")
    shots = {moment: ARTIFACTS / f"time-{name}-{moment}.png" for moment in moments}
    with sync_playwright() as playwright:
        context = launch(playwright, tmp_path / "chromium-profile", 1000)
        page = context.new_page()
        try:
            open_notebook(page, url)
            run_all(page)
            idle, steer = (page.locator(".samza-dashboard:not(.samza-snapshot)").nth(i) for i in (0, 1))

            # The idle partition named, within the event time section, with the windows it holds.
            holding = idle.locator(".samza-time-holding").first
            expect(holding).to_contain_text(
                "demo.clicks#1 (task Partition 1) holds back the watermark at 1,000 ms", timeout=60_000
            )
            expect(holding).to_contain_text("3,000 ms behind the newest event")
            # The section (its line wrapped) stays within the dashboard: wide tables scroll sideways in it.
            section, dashboard = page.evaluate(
                "() => { const d = document.querySelector('.samza-dashboard:not(.samza-snapshot)');"
                " return [d.querySelector('.samza-time').getBoundingClientRect().right,"
                " d.getBoundingClientRect().right]; }"
            )
            assert section <= dashboard + 1, (section, dashboard)
            expect(idle.locator(".samza-time-partitions")).to_contain_text("holds back the watermark")
            expect(idle.locator(".samza-time-operators")).to_contain_text("tumbling window (event time)")
            expect(idle.locator(".samza-time-windows").first).to_contain_text("waits on demo.clicks#1")
            # Every column readable at 1,200-1,400 px: no table wider than its box (notes wrap); the old
            # watermarks table is folded into the section.
            expect(idle.locator(".samza-watermarks")).to_have_count(0)
            for width in (1200, 1400, 1280):
                page.set_viewport_size({"width": width, "height": 1000})
                eventually(lambda: not cut_time_tables(page), message=f"a time table cut at {width} px")
                if width == 1200:
                    scroll_to(page, ".samza-time")
                    page.screenshot(path=str(shots["idle-partition-1200px"]), full_page=False)
            scroll_to(page, ".samza-time")
            page.screenshot(path=str(shots["idle-partition"]), full_page=False)

            # The paused job's controls at 1,280 px show the values %samza_set put in force, whole.
            expect(steer.locator(".samza-paused")).to_be_visible(timeout=60_000)
            slider = steer.locator(".samza-concurrency")
            expect(slider.locator(".widget-readout")).to_have_text("6", timeout=30_000)
            fields = steer.locator(".samza-priority")
            expect(fields).to_have_count(2, timeout=30_000)
            refunds = steer.locator(".samza-priority", has_text="refunds priority").locator("input")
            expect(refunds).to_have_value("4", timeout=30_000)
            note = steer.locator(".samza-steer-note")
            expect(note).to_contain_text("next: Partition 0 · browser-steer.orders#0@0", timeout=30_000)
            assert "has not started" not in note.inner_text()
            box = slider.bounding_box()
            assert box is not None and box["width"] >= 250, box  # not a dot
            for i in range(2):
                field = fields.nth(i)
                assert whole(field.locator("label")), field.inner_text()
                width = field.locator("input").bounding_box()
                assert width is not None and width["width"] >= 40, width
            for label in ("Stop", "Pause", "Step", "Resume"):
                button = steer.get_by_role("button", name=label, exact=True)
                assert whole(button), f"{label} is cut"
            scroll_to(page, ".samza-header", 1, "start")
            page.screenshot(path=str(shots["controls"]), full_page=False)
            (tmp_path / "root" / "looked").touch()
        except BaseException:
            with contextlib.suppress(PlaywrightTimeout):
                page.screenshot(path=str(ARTIFACTS / f"time-{name}-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    assert all(shot.stat().st_size > 10_000 for shot in shots.values())
