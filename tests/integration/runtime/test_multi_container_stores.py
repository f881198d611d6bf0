"""``samza-nb run`` of two container processes with ``SAMZA_COORDINATOR_TOKEN`` set: the coordinator's
``/stores`` routes answer a key's live value with that token (a service or a script can query the job), and
refuse a request without it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from samza_nb.runtime.dev_broker import free_port
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.integration.runtime.test_multi_container import ROOT

TOKEN = "a-token-the-user-chose-0123456789"


def get(url: str, token: str | None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())
    except OSError:
        return 0, None  # not listening yet


def test_the_stores_of_a_cli_run_answer_with_the_token_from_the_environment(tmp_path: Path) -> None:
    log = DurableLog(tmp_path / "state" / "log")
    log.create_stream("words", 4)
    log.send_batch("words", [(f"k{i % 8}", "x", None) for i in range(80)])  # each key 10 times
    log.flush()
    log.close()
    port = free_port()
    config = {
        "job.name": "stores-cli",
        "task.class": "tests.unit.runtime.multi_tasks.Count",
        "task.inputs": "log.words",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(tmp_path / "state"),
        "cluster-manager.jobcoordinator.url.port": str(port),
        "cluster-manager.container.status.interval.ms": "50",
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "int",
    }
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    run = subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT), SAMZA_COORDINATOR_TOKEN=TOKEN),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        answer = eventually(
            lambda: (a := get(f"{url}/stores/counts/keys/k3", TOKEN))[0] == 200 and a[1]["value"] == 10 and a,
            timeout=90,
            message="k3 counted 10 times",
        )
        assert answer[1]["found"] is True and answer[1]["container"] in ("0", "1")
        assert get(f"{url}/stores/counts/keys/k3", None)[0] == 401
        assert get(f"{url}/status", None)[0] == 401, "a token given: every route needs it"
    finally:
        run.send_signal(signal.SIGTERM)
        _, stderr = run.communicate(timeout=90)
    assert f"its stores: {url}/stores/<store>/keys/<key> with $SAMZA_COORDINATOR_TOKEN" in stderr
    assert run.returncode == 0, stderr
