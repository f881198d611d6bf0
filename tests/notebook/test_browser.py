"""The dashboard in a real browser: JupyterLab (and Jupyter Notebook 7, when installed) on loopback, a
notebook run from its Run menu, headless Chromium (Debian's ``chromium``, driven by Playwright):

- the task rows and the processed count, which keeps moving while a later cell blocks (the job and the
  dashboard live on threads of their own) until the test has seen what it checks;
- the low watermark: a held message is the oldest in flight, and the checkpointed offset stays before it;
- the live chart draws its lag line (bqplot draws no line at all through an unknown point);
- when the job ends, a static HTML snapshot replaces the widgets, and the saved notebook, reopened, shows
  it (not "Error displaying widget: model not found").

Screenshots are saved as tests/notebook/artifacts/dashboard-<front-end>-<moment>.png (see :mod:`.browser`
for when this runs).
"""

from __future__ import annotations

import contextlib
import re
from pathlib import Path

import pytest

from tests.eventually import eventually

from .browser import (
    ARTIFACTS,
    count,
    front_end,
    lag_path,
    launch,
    open_notebook,
    run_all,
    write_notebook,
)

__all__ = ["front_end"]  # the fixture, imported for pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELLS = [
    "%load_ext samza_nb",
    "from samza_nb.systems.inmemory.system import InMemoryBroker\n"
    "broker = InMemoryBroker.named('browser')\n"
    "broker.create_stream('clicks', partitions=2)\n"
    "for i in range(20000):\n"
    "    broker.send('clicks', i, partition=i % 2)",
    "%%samza_config\n"
    "job.name = browser-demo\n"
    "task.inputs = browser.clicks\n"
    "systems.browser.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
    "systems.browser.samza.offset.default = oldest\n"
    "task.max.concurrency = 4\n"
    "task.commit.ms = 200\n"
    "task.async.commit = true",  # commits go on while a message is held (at the low watermark)
    # Offset 5 of each partition is held (its callback kept) until the last cell: the low watermark.
    "%%samza_task\n"
    "import time\n"
    "class Clicks:\n"
    "    held = []\n"
    "    def process_async(self, envelope, collector, coordinator, callback):\n"
    "        if envelope.offset == '5':\n"
    "            Clicks.held.append(callback)\n"
    "            return\n"
    "        started = time.perf_counter()\n"
    "        while time.perf_counter() - started < 300e-6:  # 20,000 messages: 6 s or more\n"
    "            pass\n"
    "        callback.complete()",
    "%samza_run",
    # A cell that blocks (the job and its dashboard go on meanwhile) until the test has looked: the test
    # writes the file, so no fixed window can close before a slow browser gets there.
    "import pathlib, time\n"
    "deadline = time.monotonic() + 600\n"
    "while not pathlib.Path('looked').exists() and time.monotonic() < deadline:\n"
    "    time.sleep(0.05)",
    "for callback in Clicks.held:\n    callback.complete()\nbroker.end_stream('clicks')",
]
SLEEPING_CELL = 5


def test_dashboard_moves_while_a_cell_sleeps_shows_the_low_watermark_and_leaves_a_snapshot(
    front_end: tuple[str, str], tmp_path: Path
) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    name, url = front_end
    write_notebook(tmp_path / "root" / "dashboard.ipynb", CELLS)
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        moment: ARTIFACTS / f"dashboard-{name}-{moment}.png" for moment in ("busy", "snapshot", "reopened")
    }
    with sync_playwright() as playwright:
        context = launch(playwright, tmp_path / "chromium-profile", 900)
        page = context.new_page()
        try:
            open_notebook(page, url)
            run_all(page)
            rows = page.locator(".samza-task-row")
            expect(rows).to_have_count(2, timeout=60_000)
            assert rows.nth(0).get_attribute("data-task") == "Partition 0"

            # Item 2: while the sleeping cell runs ([*]), the processed count keeps changing.
            sleeping = page.locator(".jp-CodeCell").nth(SLEEPING_CELL).locator(".jp-InputPrompt")
            expect(sleeping).to_have_text(re.compile(r"\[\*\]"), timeout=60_000)
            processed = page.locator(".samza-processed").first
            before = processed.inner_text()
            expect(processed).not_to_have_text(before, timeout=20_000)
            after = processed.inner_text()
            assert count(after) > count(before), (before, after)
            expect(sleeping).to_have_text(re.compile(r"\[\*\]"))  # still sleeping: it moved meanwhile

            # Item 4: offset 5 is held, so it is the oldest in flight and the checkpoint stays before it.
            oldest = page.locator(".samza-oldest-in-flight").first
            expect(oldest).to_contain_text("@5 (", timeout=30_000)
            expect(oldest).to_contain_text("checkpointed 4", timeout=30_000)
            expect(rows.nth(0)).to_contain_text("peak ")
            # Item 8: the live chart (bqplot draws SVG) and the sampled messages in and out of each task.
            expect(page.locator(".samza-chart svg").first).to_be_visible(timeout=30_000)
            eventually(lambda: lag_path(page), timeout=30, message="a drawn lag line")
            expect(page.locator(".samza-messages").first).to_contain_text("browser.clicks#", timeout=30_000)
            page.locator(".samza-dashboard").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["busy"]), full_page=True)
            expect(sleeping).to_have_text(re.compile(r"\[\*\]"))  # all of the above while the cell blocked
            (tmp_path / "root" / "looked").touch()  # the blocking cell ends; the last cell releases the job

            # Item 5: the job ends; its widgets give way to a static snapshot.
            # (The live HTML snapshot beside the widgets is there all along, hidden: the visible one.)
            snapshot = page.locator(".samza-snapshot:visible").first
            expect(snapshot).to_be_attached(timeout=60_000)
            expect(snapshot.locator(".samza-state")).to_have_text("finished")
            expect(snapshot.locator(".samza-processed")).to_have_text("20,000 processed")
            expect(snapshot.locator(".samza-chart-summary")).to_contain_text("msg/s")
            snapshot.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["snapshot"]), full_page=True)
            page.keyboard.press("Control+s")
            saved = tmp_path / "root" / "dashboard.ipynb"
            eventually(
                lambda: ">finished</span>" in saved.read_text(), timeout=30, message="the saved snapshot"
            )
            page.reload()
            open_notebook(page, url, select_kernel=False)
            reopened = page.locator(".samza-snapshot").first
            expect(reopened).to_be_attached(timeout=60_000)
            expect(reopened.locator(".samza-state")).to_have_text("finished")
            reopened.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["reopened"]), full_page=True)
            assert "Error displaying widget" not in page.locator(".jp-Notebook").first.inner_text()
        except BaseException:
            with contextlib.suppress(PlaywrightTimeout):
                page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    assert all(shot.stat().st_size > 10_000 for shot in shots.values())
