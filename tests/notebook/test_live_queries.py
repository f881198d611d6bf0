"""Looking inside a running job of two container processes from a real Jupyter kernel: ``%%samza_sql`` (the
union of every container's committed rows), ``%samza_get`` and ``job.get`` (a key's live or committed value,
from the container owning its partition), and the coordinator's ``/stores`` endpoints behind its token.

The job counts messages per key in the store ``counts`` and commits only when asked (``%samza_pause`` commits
every task), so its live state and its committed state differ in known ways: every answer is checked against
the counts the test sent.
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.systems.log import DurableLog
from samza_nb.systems.partitioner import key_partition
from tests.eventually import eventually
from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("pandas", "%%samza_sql answers DataFrames (samza_nb[notebook])")

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parents[2]
PARTITIONS = 4
FIRST = Counter({f"w{i}": i + 1 for i in range(12)})  # w0 once ... w11 12 times: 78 messages
SECOND = Counter({"w5": 10, "w6": 3, "fresh": 2})  # sent after the commit: live, not committed


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("live-queries")


@pytest.fixture(scope="module")
def kernel(workdir: Path) -> Iterator[Kernel]:
    """A kernel working in ``workdir`` that (with its container processes) can import this repository."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    k = Kernel(cwd=str(workdir), env=dict(os.environ, PYTHONPATH=path))
    k.run("%load_ext samza_nb\n%config SamzaMagics.dashboard = 'off'")
    yield k
    k.close()


def send(base: Path, counts: Counter[str]) -> None:
    """``counts[key]`` messages of each key to the durable-log stream ``words`` (placed by their key)."""
    log = DurableLog(base / "log")
    if "words" not in log.streams():
        log.create_stream("words", PARTITIONS)
    log.send_batch("words", [(key, "x", None) for key, n in counts.items() for _ in range(n)])
    log.flush()
    log.close()


def owner(key: str) -> tuple[str, int]:
    """(container, partition) of ``key``: the partition its bytes hash to; the containers take the
    partitions in turn (0: 0 and 2, 1: 1 and 3)."""
    partition = key_partition(key.encode(), PARTITIONS)
    return str(partition % 2), partition


def sql(kernel: Kernel, query: str) -> Any:
    """The rows ``%%samza_sql counts`` answers, as records (or the one-line error it showed)."""
    reply = kernel.run(
        f"_rows = get_ipython().run_cell_magic('samza_sql', 'counts', {query!r})\n"
        "_rows = None if _rows is None else _rows.to_dict('records')",
        check=False,
    )
    errors = reply.of_type("error")
    if errors:
        return errors[0]["content"]["traceback"][0]
    return kernel.value("_rows")


def get_line(kernel: Kernel, line: str) -> str:
    reply = kernel.run(f"%samza_get {line}", check=False)
    errors = reply.of_type("error")
    return str(errors[0]["content"]["traceback"][0]) if errors else reply.stdout.strip()


def http(url: str, token: str | None, body: bytes | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, data=body, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_sql_and_lookups_into_a_running_two_container_job(kernel: Kernel, workdir: Path) -> None:
    base = workdir / "counting"
    send(base, FIRST)
    kernel.run(
        "%%samza_config\n"
        "job.name = counting\ntask.inputs = log.words\nsystems.log.samza.offset.default = oldest\n"
        f"job.container.count = 2\njob.logged.store.base.dir = {base}\n"
        "task.commit.ms = 600000\ncluster-manager.container.status.interval.ms = 50\n"
        "task.class = tests.unit.runtime.multi_tasks.Count\n"
        "stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory\n"
        "stores.counts.key.serde = string\nstores.counts.msg.serde = int\n"
    )
    kernel.run("%samza_run")
    try:
        eventually(lambda: kernel.value("samza.view.processed") == 78, timeout=90, message="78 processed")

        # Nothing committed yet: the live values are there, the committed ones are not.
        assert "nothing committed yet (task.commit.ms = 600000)" in sql(kernel, "SELECT * FROM counts")
        container, partition = owner("w5")
        assert get_line(kernel, "counts w5") == (
            f"counts['w5'] = 6 (live; container {container}, task 'Partition {partition}', "
            f"partition {partition})"
        )
        assert get_line(kernel, "counts w5 --committed").startswith("counts['w5']: no such key (committed;")

        # A pause commits every task of both containers: live and committed agree.
        kernel.run("%samza_pause --timeout 60")
        kernel.run("%samza_resume")
        rows = sql(kernel, "SELECT key, value, partition FROM counts ORDER BY key")
        assert {r["key"]: r["value"] for r in rows} == dict(FIRST)
        assert all(r["partition"] == owner(r["key"])[1] for r in rows), "each key in its own partition"
        assert sql(kernel, "SELECT count(*) AS keys, sum(value) AS n FROM counts") == [{"keys": 12, "n": 78}]

        # More messages, not committed: the live values move, the committed ones and SQL stay.
        send(base, SECOND)
        eventually(lambda: kernel.value("samza.view.processed") == 93, timeout=60, message="93 processed")
        assert get_line(kernel, "counts w5").startswith(f"counts['w5'] = 16 (live; container {container},")
        assert get_line(kernel, "counts w5 --committed").startswith(
            f"counts['w5'] = 6 (committed; container {container}, task 'Partition {partition}',"
        )
        fresh_container, fresh_partition = owner("fresh")
        assert get_line(kernel, "counts fresh") == (
            f"counts['fresh'] = 2 (live; container {fresh_container}, task 'Partition {fresh_partition}', "
            f"partition {fresh_partition})"
        )
        assert get_line(kernel, "counts fresh --committed").startswith("counts['fresh']: no such key")
        assert get_line(kernel, "counts nope") == (
            "counts['nope']: no such key (live; searched partitions "
            + ", ".join(str(p) for p in sorted(range(PARTITIONS), key=lambda p: _order(p, owner("nope"))))
            + ")"
        )
        assert sql(kernel, "SELECT count(*) AS keys, sum(value) AS n FROM counts") == [{"keys": 12, "n": 78}]
        answer = kernel.value(
            "(lambda a: (a.found, a.value, a.container, a.task, a.partition))"
            "(samza.job().get('counts', 'w6'))"
        )
        w6 = owner("w6")
        assert answer == (True, 10, w6[0], f"Partition {w6[1]}", w6[1])
        assert kernel.value("samza.job().get('counts', 'w6', committed=True).value") == 7
        assert "no store 'ghost' in this job (stores: counts)" in get_line(kernel, "ghost w1")

        # The same over HTTP on the coordinator, with its token only.
        url, token = kernel.value("(samza.job().coordinator_url, samza.job().coordinator_token)")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+", url) and len(token) >= 32
        key_url = f"{url}/stores/counts/keys/w5"
        sql_url = f"{url}/stores/counts/sql"
        query = b"SELECT sum(value) AS n FROM counts"
        for wrong in (None, token[:-1], "x"):
            assert http(key_url, wrong)[0] == 401
            assert http(sql_url, wrong, query)[0] == 401
        code, body = http(key_url, token)
        assert code == 200 and (body["value"], body["container"], body["partition"]) == (
            16,
            container,
            partition,
        )
        assert http(key_url + "?committed=true", token)[1]["value"] == 6
        code, body = http(f"{url}/stores/counts/keys/nope", token)
        assert code == 404 and body["found"] is False
        assert http(sql_url, token, query) == (200, {"columns": ["n"], "rows": [[78]]})
        assert http(sql_url, token, json.dumps({"sql": "SELECT count(*) FROM counts"}).encode())[1][
            "rows"
        ] == [[12]]
        code, status = http(f"{url}/status", None)
        assert code == 200, "the other routes stay as they were on loopback"
        # Each container serves its stores behind a token of its own, which /status never shows.
        reports = status["containers"]
        assert all(r["query-url"].startswith("http://127.0.0.1:") for r in reports.values())
        assert not any("query-token" in r for r in reports.values())
        for report in reports.values():
            assert http(f"{report['query-url']}/stores/counts/rows", token)[0] == 401
    finally:
        kernel.run("%samza_stop")
    # The stop committed: the state files hold the live values now.
    rows = sql(kernel, "SELECT key, value FROM counts ORDER BY key")
    assert {r["key"]: r["value"] for r in rows} == dict(FIRST + SECOND)
    assert "has ended" in get_line(kernel, "counts w5")


def _order(partition: int, owned: tuple[str, int]) -> tuple[int, int, int]:
    """The order partitions are searched in for a key owned by ``owned``: the owning container's (its own
    partition first), then the other container's."""
    container, first = owned
    return (str(partition % 2) != container, partition != first, partition)
