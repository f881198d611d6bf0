"""The dashboard in a real browser: JupyterLab (and Jupyter Notebook 7, when installed) on loopback, a
notebook run from its Run menu, headless Chromium (Debian's ``chromium``, driven by Playwright) shows the
task rows and a non-zero processed count.

Screenshots are saved as tests/notebook/artifacts/dashboard-<front-end>.png. Skipped, with the reason,
when chromium or Playwright is missing, except in CI (``CI=true``), where it must run
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

import pytest

from tests.eventually import eventually
from tests.requirements import unavailable

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ARTIFACTS = Path(__file__).parent / "artifacts"
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
    "from samza_nb.systems.inmemory import InMemoryBroker\n"
    "broker = InMemoryBroker.named('browser')\n"
    "broker.create_stream('clicks', partitions=2)\n"
    "for i in range(20000):\n"
    "    broker.send('clicks', i, partition=i % 2)\n"
    "broker.end_stream('clicks')",
    "%%samza_config\n"
    "job.name = browser-demo\n"
    "task.inputs = browser.clicks\n"
    "systems.browser.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
    "systems.browser.samza.offset.default = oldest\n"
    "task.max.concurrency = 4",
    "%%samza_task\n"
    "class Clicks:\n"
    "    async def process(self, envelope, collector, coordinator):\n"
    "        pass",
    "%samza_run",
]


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


def _write_notebook(path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    notebook = new_notebook(
        cells=[new_code_cell(source) for source in CELLS],
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


def test_dashboard_shows_task_rows_and_progress(front_end: tuple[str, str], tmp_path: Path) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright

    name, url = front_end
    ARTIFACTS.mkdir(exist_ok=True)
    screenshot = ARTIFACTS / f"dashboard-{name}.png"
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
            page.goto(url, timeout=60_000)
            page.locator(".jp-NotebookPanel").first.wait_for(timeout=60_000)
            # JupyterLab may ask which kernel to start (even with a kernelspec in the metadata): the
            # notebook's own, python3, is preselected.
            select = page.locator(".jp-Dialog").get_by_role("button", name="Select")
            with contextlib.suppress(PlaywrightTimeout):
                select.click(timeout=15_000)
            expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first).to_be_attached(
                timeout=60_000
            )
            page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
            rows = page.locator(".samza-task-row")
            expect(rows).to_have_count(2, timeout=60_000)
            processed = page.locator(".samza-processed").first
            expect(processed).to_have_text(re.compile(r"[1-9][\d,]* processed"), timeout=60_000)
            expect(page.locator(".samza-state").first).to_have_text("finished", timeout=60_000)
            # When the job ends, the cell's output is updated once more (its final display): a dashboard
            # element found just before may be replaced under the scroll, so find it again then.
            for attempt in range(3):
                try:
                    page.locator(".samza-dashboard").first.scroll_into_view_if_needed()
                    break
                except PlaywrightError:
                    if attempt == 2:
                        raise
            page.screenshot(path=str(screenshot), full_page=True)
            assert rows.nth(0).get_attribute("data-task") == "Partition 0"
            assert "in flight" in rows.nth(1).inner_text()
            assert processed.inner_text() == "20,000 processed"
        except BaseException:
            page.screenshot(path=str(ARTIFACTS / f"dashboard-{name}-failure.png"), full_page=True)
            raise
        finally:
            context.close()
    assert screenshot.stat().st_size > 10_000
