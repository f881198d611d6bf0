"""Who can reach the coordinator's HTTP service: loopback by default, a job token on any other address."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Collection, Iterator, Mapping
from typing import Any

import pytest

from samza_nb.container.queries import UnknownStore
from samza_nb.coordinator import client
from samza_nb.coordinator.http_server import CoordinatorHttpServer, is_loopback
from samza_nb.coordinator.status import ContainerReport
from samza_nb.errors import SamzaError


class Endpoints:
    """A fixed job model with containers 0 and 1; reports are kept."""

    def __init__(self) -> None:
        self.reports: list[ContainerReport] = []

    def job_model_json(self) -> bytes:
        return b'{"containers": {}}'

    def locality(self) -> Mapping[str, str]:
        return {"0": "h"}

    def status(self) -> Mapping[str, Any]:
        return {"state": "running"}

    def container_ids(self) -> Collection[str]:
        return ("0", "1")

    def report(self, report: ContainerReport) -> bool | None:
        self.reports.append(report)
        return None

    def fenced(self) -> str | None:
        return None

    def control(self) -> Mapping[str, Any]:
        return {"seq": 0, "paused": False, "knobs": {}}

    def command(self, command: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"control": self.control(), "paused": []}

    def store_key(self, store: str, key: str, committed: bool) -> Mapping[str, Any]:
        if store != "counts":
            raise UnknownStore(f"no store {store!r} in this job (stores: counts)")
        return {"store": store, "key": key, "found": key == "a/b", "value": 3 if committed else 4}

    def store_sql(self, store: str, sql: str) -> Mapping[str, Any]:
        return {"columns": ["sql"], "rows": [[sql]]}


def get(url: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture
def public() -> Iterator[CoordinatorHttpServer]:
    server = CoordinatorHttpServer(Endpoints(), "0.0.0.0")
    yield server
    server.stop()


def local_url(server: CoordinatorHttpServer) -> str:
    return "http://127.0.0.1:" + server.url.rsplit(":", 1)[1]


def test_loopback_by_default_needs_no_token() -> None:
    server = CoordinatorHttpServer(Endpoints())
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.token is None
        assert get(server.url + "/status") == (200, {"state": "running"})
    finally:
        server.stop()


def test_non_loopback_without_token_gets_401(public: CoordinatorHttpServer) -> None:
    assert public.token is not None and len(public.token) >= 32
    for path in ("/", "/locality", "/status", "/containers/0/status", "/nowhere"):
        code, body = get(local_url(public) + path)
        assert code == 401, path
        assert "token" in body["error"]


def test_non_loopback_with_wrong_token_gets_401(public: CoordinatorHttpServer) -> None:
    assert public.token is not None
    assert get(local_url(public) + "/", public.token[:-1])[0] == 401
    assert get(local_url(public) + "/", public.token + "x")[0] == 401
    assert get(local_url(public) + "/", "é")[0] == 401


def test_non_loopback_with_token_is_served(public: CoordinatorHttpServer) -> None:
    assert get(local_url(public) + "/status", public.token) == (200, {"state": "running"})


def test_each_start_has_its_own_token() -> None:
    a = CoordinatorHttpServer(Endpoints(), "0.0.0.0")
    b = CoordinatorHttpServer(Endpoints(), "0.0.0.0")
    try:
        assert a.token != b.token
    finally:
        a.stop()
        b.stop()


def test_client_sends_the_token_from_the_environment(
    public: CoordinatorHttpServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    report = ContainerReport("0", "h", "running", 0, (), None, 1)
    with pytest.raises(client.CoordinatorUnreachable, match="401"):
        client.send_report(local_url(public), report, 5.0)
    assert public.token is not None
    monkeypatch.setenv(client.TOKEN_ENV, public.token)
    assert client.send_report(local_url(public), report, 5.0) is False


def test_empty_token_refused() -> None:
    with pytest.raises(SamzaError, match="token"):
        CoordinatorHttpServer(Endpoints(), "127.0.0.1", 0, "")


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.5.0.1", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("::", False),
        ("example.com", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


class ModelEndpoints(Endpoints):
    """Serves the job model of job ``other`` (id 7)."""

    def job_model_json(self) -> bytes:
        config = {
            "job.name": "other",
            "job.id": "7",
            "task.inputs": "mem.in",
            "task.class": "tests.unit.coordinator.test_http_reach.NoTask",
            "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
        }
        return json.dumps(
            {"config": config, "containers": {"0": {"processor-id": "0", "tasks": {}}}}
        ).encode()


@pytest.mark.parametrize("expected", [("mine", None), (None, "8"), ("mine", "7"), ("other", "8")])
def test_container_refuses_a_job_model_of_another_job(expected: tuple[str | None, str | None]) -> None:
    import asyncio

    from samza_nb.runtime.cli.container import ContainerProcess

    endpoints = ModelEndpoints()
    server = CoordinatorHttpServer(endpoints)
    try:
        process = ContainerProcess(server.url, "0", 5.0)
        process.expected_job = expected
        with pytest.raises(SamzaError, match="is of job 'other' \\(id '7'\\).*refusing"):
            asyncio.run(process.run())
        assert process.container is None  # never started
    finally:
        server.stop()


def test_the_store_routes_need_a_token_also_on_loopback() -> None:
    server = CoordinatorHttpServer(Endpoints())
    try:
        assert server.token is None and len(server.store_token) >= 32
        assert get(server.url + "/status")[0] == 200  # the other routes as before
        for token in (None, server.store_token[:-1], "x"):
            code, body = get(server.url + "/stores/counts/keys/k", token)
            assert code == 401 and "token" in body["error"]
        assert get(server.url + "/stores/counts/keys/a%2Fb", server.store_token) == (
            200,
            {"store": "counts", "key": "a/b", "found": True, "value": 4},
        )
        committed = get(server.url + "/stores/counts/keys/a%2Fb?committed=true", server.store_token)
        assert committed[1]["value"] == 3
        assert get(server.url + "/stores/counts/keys/zz", server.store_token)[0] == 404
        assert get(server.url + "/stores/ghost/keys/zz", server.store_token) == (
            404,
            {"error": "no store 'ghost' in this job (stores: counts)"},
        )
        request = urllib.request.Request(
            server.url + "/stores/counts/sql",
            data=b"SELECT 1",
            headers={"Authorization": f"Bearer {server.store_token}"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read()) == {"columns": ["sql"], "rows": [["SELECT 1"]]}
    finally:
        server.stop()


def test_a_non_loopback_coordinator_guards_its_stores_with_its_token(public: CoordinatorHttpServer) -> None:
    assert public.store_token == public.token
    assert get(local_url(public) + "/stores/counts/keys/a%2Fb")[0] == 401
    assert get(local_url(public) + "/stores/counts/keys/a%2Fb", public.token)[0] == 200
