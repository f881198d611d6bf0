"""Driving Jupyter in a real browser for the browser tests: JupyterLab (and Jupyter Notebook 7, when
installed) on loopback with a temporary root and config (the ``front_end`` fixture), headless Chromium
(Debian's ``chromium``, driven by Playwright). The kernel imports this checkout's samza_nb.

Skipped, with the reason, when chromium or Playwright is missing, except in CI (``CI=true``), where it must
run (``scripts/browser-test-deps.sh`` installs chromium).
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

ARTIFACTS = Path(__file__).parent / "artifacts"
"""Screenshots: tests/notebook/artifacts/<test>-<front-end>-<moment>.png."""
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


def requirements() -> None:
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def write_notebook(path: Path, cells: list[str]) -> None:
    """A notebook of ``cells`` (code) at ``path``, for the python3 kernel."""
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
    config); yields (front-end name, the URL of its dashboard.ipynb with the token: tests write it). The
    server is killed afterwards."""
    name: str = request.param
    server_command, path = FRONT_ENDS[name]
    requirements()
    executable = Path(sys.executable).parent / server_command
    if not executable.exists():
        if name == "lab":
            pytest.fail(f"{server_command} is not installed")
        unavailable(f"{server_command} is not installed (pip install notebook)")
    root = tmp_path / "root"
    root.mkdir()
    # No "official Jupyter news?" pop-up over the dashboard.
    settings = tmp_path / "config" / "lab" / "user-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    token = uuid.uuid4().hex
    port = free_port()
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
            stop_server(server)
        finally:
            log.close()


def stop_server(server: subprocess.Popen[bytes]) -> None:
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


LAG_STROKE = "rgb(221, 102, 34)"  # charts.LAG_COLOUR, #d62


def lag_path(page: Any) -> str | None:
    """The ``d`` of the chart's lag line when it is drawn (not ``null``, not empty), else None."""
    paths = page.eval_on_selector_all(
        ".samza-chart path.line",
        "paths => paths.map(p => [getComputedStyle(p).stroke, p.getAttribute('d')])",
    )
    drawn = [d for stroke, d in paths if stroke == LAG_STROKE and d and d != "null"]
    return drawn[0] if drawn else None


def count(text: str) -> int:
    """``12,345 processed`` -> 12345."""
    return int(text.split()[0].replace(",", ""))


def open_notebook(page: Any, url: str, *, select_kernel: bool = True) -> None:
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


def launch(playwright: Any, profile: Path, height: int) -> Any:
    """Headless Chromium (the suite's own binary) with a persistent ``profile``, 1280 x ``height``."""
    return playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=CHROMIUM,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1280, "height": height},
    )


def run_all(page: Any) -> None:
    """Run > Run All Cells, from the menu bar, as a user does."""
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
