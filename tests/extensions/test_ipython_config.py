"""The IPython config snippet loads the samza_nb magics at start, without %load_ext."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.requirements import require

SNIPPET = Path(__file__).resolve().parents[2] / "extensions" / "ipython_config.py"


def test_the_snippet_loads_the_extension_in_a_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
    os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")
    import jupyter_client

    profile = tmp_path / "ipython" / "profile_default"
    profile.mkdir(parents=True)
    shutil.copy(SNIPPET, profile / "ipython_config.py")
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    manager = jupyter_client.KernelManager(kernel_name="python3")
    manager.start_kernel()
    client = manager.client()
    try:
        client.start_channels()
        client.wait_for_ready(timeout=60)
        outputs: list[str] = []

        def collect(message: dict[str, object]) -> None:
            content = message["content"]
            if message["msg_type"] == "stream" and isinstance(content, dict):
                outputs.append(str(content["text"]))

        reply = client.execute_interactive(
            "print('samza_run' in get_ipython().magics_manager.magics['line'], type(samza).__name__)",
            timeout=30,
            output_hook=collect,
        )
        assert reply["content"]["status"] == "ok"
        assert "".join(outputs).strip() == "True NotebookSession"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
