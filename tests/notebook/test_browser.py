"""The dashboard in a real browser: JupyterLab (and Jupyter Notebook 7, when installed) on loopback, a
notebook run from its Run menu, headless Chromium (Debian's ``chromium``, driven by Playwright):

- the task rows and the processed count, which keeps moving while a later cell sleeps (the job and the
  dashboard live on threads of their own);
- the low watermark: a held message is the oldest in flight, and the checkpointed offset stays before it;
- the live chart draws its lag line (bqplot draws no line at all through an unknown point);
- when the job ends, a static HTML snapshot replaces the widgets, and the saved notebook, reopened, shows
  it (not "Error displaying widget: model not found");
- in the dark theme, a notebook saved while its job runs and reopened after a kernel restart shows the HTML
  snapshot of the moment it was saved (the page still open says the kernel stopped); the empty part of an
  in-flight bar is not white.

Screenshots are saved as tests/notebook/artifacts/dashboard-<front-end>-<moment>.png. Skipped, with the
reason, when chromium or Playwright is missing, except in CI (``CI=true``), where it must run
(``scripts/browser-test-deps.sh`` installs chromium).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.eventually import eventually
from tests.requirements import unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).parent / "artifacts"
REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

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
    "import time\ntime.sleep(8)  # the job and its dashboard go on meanwhile",
    "for callback in Clicks.held:\n    callback.complete()\nbroker.end_stream('clicks')",
]
SLEEPING_CELL = 5


def _requirements() -> None:
    """Skip (fail in CI) when the browser test cannot run here."""
    problems = []
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        problems.append(f"no chromium at {CHROMIUM} (scripts/browser-test-deps.sh installs it)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        problems.append("playwright is not installed")
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        problems.append("jupyterlab is not installed")
    if problems:
        unavailable("; ".join(problems))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _write_notebook(path: Path, cells: list[str] = CELLS) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    notebook = new_notebook(
        cells=[new_code_cell(source) for source in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(notebook, path)


FRONT_ENDS = {
    # front-end: (server command, URL path of the notebook)
    "lab": ("jupyter-lab", "/lab/tree/dashboard.ipynb"),
    "notebook": ("jupyter-notebook", "/notebooks/dashboard.ipynb"),
}


@pytest.fixture(params=sorted(FRONT_ENDS))
def front_end(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """A Jupyter server (JupyterLab, or Notebook 7) on a free loopback port with a temporary root (and
    config) holding dashboard.ipynb; yields (front-end name, the notebook's URL with the token). The
    server is killed afterwards."""
    name: str = request.param
    server_command, path = FRONT_ENDS[name]
    _requirements()
    executable = Path(sys.executable).parent / server_command
    if not executable.exists():
        if name == "lab":
            pytest.fail(f"{server_command} is not installed")
        unavailable(f"{server_command} is not installed (pip install notebook)")
    root = tmp_path / "root"
    root.mkdir()
    _write_notebook(root / "dashboard.ipynb")
    # No "official Jupyter news?" pop-up over the dashboard.
    settings = tmp_path / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    token = uuid.uuid4().hex
    port = _free_port()
    env = dict(os.environ)
    env.update(
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"),
        JUPYTER_PLATFORM_DIRS="1",
        # The kernel imports this checkout's samza_nb (not an installed copy): its cwd is the server's root.
        PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
    )
    command = [
        str(executable),
        "--no-browser",
        f"--IdentityProvider.token={token}",
        f"--port={port}",
        "--ip=127.0.0.1",
        f"--ServerApp.root_dir={root}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI runs as root
    log = (tmp_path / "jupyter-server.log").open("wb")
    server = subprocess.Popen(
        command, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        status = f"http://127.0.0.1:{port}/api/status?token={token}"

        def serving() -> bool:
            assert server.poll() is None, (tmp_path / "jupyter-server.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(status, timeout=1) as response:
                    return bool(response.status == 200)
            except OSError:
                return False

        eventually(serving, timeout=60, message=f"{server_command} serving {status}")
        yield name, f"http://127.0.0.1:{port}{path}?token={token}"
    finally:
        try:
            _stop(server)
        finally:
            log.close()


def _stop(server: subprocess.Popen[bytes]) -> None:
    """Stop the server and the kernels it started (its whole process group)."""
    for signum, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(server.pid, signum)
        except ProcessLookupError:
            break
        try:
            server.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    server.poll()


def test_dashboard_moves_while_a_cell_sleeps_shows_the_low_watermark_and_leaves_a_snapshot(
    front_end: tuple[str, str], tmp_path: Path
) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    name, url = front_end
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        moment: ARTIFACTS / f"dashboard-{name}-{moment}.png" for moment in ("busy", "snapshot", "reopened")
    }
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900},
        )
        page = context.new_page()
        try:
            _open(page, url)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
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
            assert _count(after) > _count(before), (before, after)
            expect(sleeping).to_have_text(re.compile(r"\[\*\]"))  # still sleeping: it moved meanwhile

            # Item 4: offset 5 is held, so it is the oldest in flight and the checkpoint stays before it.
            oldest = page.locator(".samza-oldest-in-flight").first
            expect(oldest).to_contain_text("@5 (", timeout=30_000)
            expect(oldest).to_contain_text("checkpointed 4", timeout=30_000)
            expect(rows.nth(0)).to_contain_text("peak ")
            # Item 8: the live chart (bqplot draws SVG) and the sampled messages in and out of each task.
            expect(page.locator(".samza-chart svg").first).to_be_visible(timeout=30_000)
            eventually(lambda: _lag_path(page), timeout=30, message="a drawn lag line")
            expect(page.locator(".samza-messages").first).to_contain_text("browser.clicks#", timeout=30_000)
            page.locator(".samza-dashboard").first.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["busy"]), full_page=True)

            # Item 5: the job ends; its widgets give way to a static snapshot.
            snapshot = page.locator(".samza-snapshot").first
            expect(snapshot).to_be_attached(timeout=60_000)
            expect(snapshot.locator(".samza-state")).to_have_text("finished")
            expect(snapshot.locator(".samza-processed")).to_have_text("20,000 processed")
            expect(snapshot.locator(".samza-chart-summary")).to_contain_text("msg/s")
            snapshot.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["snapshot"]), full_page=True)
            page.keyboard.press("Control+s")
            saved = tmp_path / "root" / "dashboard.ipynb"
            eventually(
                lambda: "samza-snapshot" in saved.read_text(), timeout=30, message="the saved snapshot"
            )
            page.reload()
            _open(page, url, select_kernel=False)
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


LAG_STROKE = "rgb(221, 102, 34)"  # charts.LAG_COLOUR, #d62


def _lag_path(page: Any) -> str | None:
    """The ``d`` of the chart's lag line when it is drawn (not ``null``, not empty), else None."""
    paths = page.eval_on_selector_all(
        ".samza-chart path.line",
        "paths => paths.map(p => [getComputedStyle(p).stroke, p.getAttribute('d')])",
    )
    drawn = [d for stroke, d in paths if stroke == LAG_STROKE and d and d != "null"]
    return drawn[0] if drawn else None


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
    _write_notebook(tmp_path / "root" / "running.ipynb", RUNNING_CELLS)
    url = url.replace("dashboard.ipynb", "running.ipynb")
    saved = tmp_path / "root" / "running.ipynb"
    ARTIFACTS.mkdir(exist_ok=True)
    shots = {
        moment: ARTIFACTS / f"saved-{name}-{moment}.png" for moment in ("running", "restarted", "reopened")
    }
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 1000},
        )
        page = context.new_page()
        try:
            _open(page, url)
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
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
            eventually(lambda: _lag_path(page), timeout=30, message="a drawn lag line")
            # The HTML snapshot is there, hidden while the live widget shows, and keeps up with the job.
            snapshot = page.locator(".samza-snapshot")
            expect(snapshot).to_have_count(1, timeout=30_000)
            expect(snapshot).to_be_hidden()
            eventually(
                lambda: _count(snapshot.locator(".samza-processed").text_content() or "0 processed") > 0,
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
            _open(page, url)
            reopened = page.locator(".samza-snapshot")
            expect(reopened).to_be_visible(timeout=60_000)
            expect(reopened).to_contain_text("the live view needs the kernel that ran it")
            expect(reopened.locator(".samza-state")).to_have_text("running")
            assert _count(reopened.locator(".samza-processed").inner_text()) == at_save
            assert "Error displaying widget" not in page.locator(".jp-Notebook").first.inner_text()
            reopened.scroll_into_view_if_needed()
            page.screenshot(path=str(shots["reopened"]), full_page=True)
        except BaseException:
            with contextlib.suppress(PlaywrightTimeout):
                page.screenshot(path=str(ARTIFACTS / f"saved-{name}-failure.png"), full_page=True)
            raise
        finally:
            context.close()


def _count(text: str) -> int:
    """``12,345 processed`` -> 12345."""
    return int(text.split()[0].replace(",", ""))


def _open(page: Any, url: str, *, select_kernel: bool = True) -> None:
    """Open the notebook and wait for its kernel to be idle."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    if select_kernel:
        page.goto(url, timeout=60_000)
    page.locator(".jp-NotebookPanel").first.wait_for(timeout=60_000)
    # JupyterLab may ask which kernel to start (even with a kernelspec in the metadata): the notebook's
    # own, python3, is preselected.
    select = page.locator(".jp-Dialog").get_by_role("button", name="Select")
    with contextlib.suppress(PlaywrightTimeout):
        select.click(timeout=15_000 if select_kernel else 5_000)
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first).to_be_attached(
        timeout=60_000
    )
