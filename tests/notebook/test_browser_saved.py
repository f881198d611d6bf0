"""A notebook saved while its job runs, in a real browser (JupyterLab, and Notebook 7 when installed, in
the dark theme, see :mod:`.browser`): the live chart draws its lag line, the empty part of an in-flight bar is
not white, the HTML snapshot beside the widget is hidden while the widget shows and keeps up with the job;
after a kernel restart the page shows the snapshot instead of a frozen dashboard, and the notebook as saved,
opened again, shows the snapshot of the moment it was saved (not "Error displaying widget: model not found").

Screenshots are saved as tests/notebook/artifacts/saved-<front-end>-<moment>.png.
"""

from __future__ import annotations

import contextlib
import json
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

RUNNING_CELLS = [
    "%load_ext samza_nb",
    "from samza_nb.systems.inmemory.system import InMemoryBroker\n"
    "broker = InMemoryBroker.named('saved-running')\n"
    "broker.create_stream('backlog', partitions=2)\n"
    "for i in range(100_000):\n"
    "    broker.send('backlog', i, partition=i % 2)",
    "%%samza_config\n"
    "job.name = backlog\n"
    "task.inputs = saved-running.backlog\n"
    "systems.saved-running.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
    "systems.saved-running.samza.offset.default = oldest\n"
    "task.max.concurrency = 4",
    "%%samza_task\n"
    "import time\n"
    "class Slow:\n"
    "    def process(self, envelope, collector, coordinator):\n"
    "        started = time.perf_counter()\n"
    "        while time.perf_counter() - started < 500e-6:  # 100,000 messages: a minute or more\n"
    "            pass",
    "%samza_run",
]


def _dark_theme(config: Path) -> None:
    """JupyterLab's dark theme for pages opened from now on (user settings are read at page load)."""
    settings = config / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "themes.jupyterlab-settings").write_text(json.dumps({"theme": "JupyterLab Dark"}))


def _rgb(colour: str) -> tuple[int, ...]:
    """``rgb(97, 97, 97)`` -> (97, 97, 97)."""
    return tuple(int(part) for part in re.findall(r"\d+", colour)[:3])


def _saved_processed(path: Path) -> int:
    """The processed count of the HTML snapshot in the saved notebook at ``path`` (0: none yet)."""
    try:
        notebook = json.loads(path.read_text())
    except json.JSONDecodeError:  # being written
        return 0
    counts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            html = output.get("data", {}).get("text/html", "")
            html = "".join(html) if isinstance(html, list) else html  # nbformat splits lines
            counts += re.findall(r"<span class='samza-processed'><b>([\d,]+)</b> processed", html)
    return max((int(count.replace(",", "")) for count in counts), default=0)


def test_a_notebook_saved_while_its_job_runs_shows_its_snapshot_after_a_kernel_restart(
    front_end: tuple[str, str], tmp_path: Path
) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    name, url = front_end
    _dark_theme(tmp_path / "config")
    write_notebook(tmp_path / "root" / "running.ipynb", RUNNING_CELLS)
    url = url.replace("dashboard.ipynb", "running.ipynb")
    saved = tmp_path / "root" / "running.ipynb"
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        moment: ARTIFACTS / f"saved-{name}-{moment}.png" for moment in ("running", "restarted", "reopened")
    }
    with sync_playwright() as playwright:
        context = launch(playwright, tmp_path / "chromium-profile", 1000)
        page = context.new_page()
        try:
            open_notebook(page, url)
            run_all(page)
            processed = page.locator(".samza-dashboard:not(.samza-snapshot) .samza-processed").first
            expect(processed).not_to_have_text(re.compile(r"^0 processed"), timeout=60_000)
            # The empty part of an in-flight bar in the dark theme: a dark grey, not white (read as full).
            # (Read in one step: the body's HTML is replaced a few times a second.)
            expect(page.locator(".samza-in-flight-bar").first).to_be_attached(timeout=30_000)
            background = page.evaluate(
                "getComputedStyle(document.querySelector("
                "'.samza-dashboard:not(.samza-snapshot) .samza-in-flight-bar')).backgroundColor"
            )
            assert max(_rgb(background)) < 160, background
            eventually(lambda: lag_path(page), timeout=30, message="a drawn lag line")
            # The HTML snapshot is there, hidden while the live widget shows, and keeps up with the job.
            snapshot = page.locator(".samza-snapshot")
            expect(snapshot).to_have_count(1, timeout=30_000)
            expect(snapshot).to_be_hidden()
            eventually(
                lambda: count(snapshot.locator(".samza-processed").text_content() or "0 processed") > 0,
                timeout=30,
                message="a snapshot with messages processed",
            )
            page.locator(".samza-dashboard").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["running"]), full_page=True)
            page.keyboard.press("Control+s")
            eventually(lambda: _saved_processed(saved) > 0, timeout=30, message="the saved snapshot")
            at_save = _saved_processed(saved)

            # The kernel restarts: its exit hook closes the widgets and says so in the snapshot.
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel…$")).click()
            page.locator(".jp-Dialog").locator(".jp-mod-accept").click()
            # (The page shows the last snapshot it received, the exit hook's when it arrived in time.)
            expect(snapshot).to_be_visible(timeout=60_000)
            expect(snapshot).to_contain_text("the live view needs the kernel that ran it")
            expect(page.locator(".samza-dashboard:not(.samza-snapshot)")).to_be_hidden()
            snapshot.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["restarted"]), full_page=True)

            # The notebook as saved, opened again: the snapshot of that moment, no widget error.
            page.close()
            page = context.new_page()
            open_notebook(page, url)
            reopened = page.locator(".samza-snapshot")
            expect(reopened).to_be_visible(timeout=60_000)
            expect(reopened).to_contain_text("the live view needs the kernel that ran it")
            expect(reopened.locator(".samza-state")).to_have_text("running")
            assert count(reopened.locator(".samza-processed").inner_text()) == at_save
            assert "Error displaying widget" not in page.locator(".jp-Notebook").first.inner_text()
            reopened.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["reopened"]), full_page=True)
        except BaseException:
            with contextlib.suppress(PlaywrightTimeout):
                page.screenshot(path=str(ARTIFACTS / f"saved-{name}-failure.png"), full_page=True)
            raise
        finally:
            context.close()
