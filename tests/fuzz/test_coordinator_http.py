"""Fuzzed requests to the coordinator's real HTTP server: a status line always, never 500, never a hang.

Under the fuzzing budget of :mod:`tests.fuzz.budget` (derandomized in ``make test``; ``make fuzz-nightly``
sets ``SAMZA_NB_FUZZ_EXAMPLES``)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.coordinator.http_server import CoordinatorHttpServer
from tests.unit.coordinator.test_http_reach import Endpoints

from .budget import fuzz

methods = st.sampled_from(["GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS", "BREW", "get", ""])
paths = st.one_of(
    st.sampled_from(["/", "/status", "/locality", "/containers/0/status", "/containers/9/status", "*"]),
    st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=60),
)
header_names = st.sampled_from(["Content-Length", "Authorization", "Transfer-Encoding", "Host", "X-A"])
header_values = st.one_of(
    st.sampled_from(["0", "-1", "5", "99999999999999999999", "chunked", "Bearer", "Bearer x", " 3 "]),
    st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=30),
)


@pytest.fixture(scope="module", params=["loopback", "public"])
def server(request: pytest.FixtureRequest) -> Iterator[CoordinatorHttpServer]:
    host = "127.0.0.1" if request.param == "loopback" else "0.0.0.0"
    s = CoordinatorHttpServer(Endpoints(), host)
    yield s
    s.stop()


def exchange(server: CoordinatorHttpServer, raw: bytes) -> bytes:
    port = int(server.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):  # a hang is a socket timeout: the test fails
            chunks.append(chunk)
    return b"".join(chunks)


@fuzz
@given(
    method=methods,
    path=paths,
    version=st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "HTTP/1", ""]),
    headers=st.lists(st.tuples(header_names, header_values), max_size=4),
    body=st.binary(max_size=200),
)
@example(method="PUT", path="/containers/0/status", version="HTTP/1.1", headers=[], body=b"{")
@example(
    method="PUT",
    path="/containers/0/status",
    version="HTTP/1.1",
    headers=[("Content-Length", "5")],
    body=b"\xff\xfe[]]",
)
@example(method="GET", path="/", version="HTTP/9.9", headers=[], body=b"")  # was a body, no status line
@example(method="GET", path="", version="HTTP/1.1", headers=[], body=b"")  # HTTP/0.9: was no status line
@example(method="GET", path="/%ff%00", version="HTTP/1.1", headers=[], body=b"")
def test_malformed_requests_get_an_answer_never_500(
    server: CoordinatorHttpServer,
    method: str,
    path: str,
    version: str,
    headers: list[tuple[str, str]],
    body: bytes,
) -> None:
    line = f"{method} {path} {version}".strip()
    head = "".join(f"{k}: {v}\r\n" for k, v in headers)
    raw = f"{line}\r\n{head}\r\n".encode("latin-1") + body
    answer = exchange(server, raw)
    if not line:
        return  # a blank line then EOF: the server may just close
    assert answer.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")), answer[:200]
    status = int(answer.split(b" ", 2)[1])
    assert (status != 500 and status < 500) or status in (501, 505), answer[:300]


@fuzz
@given(st.binary(min_size=1, max_size=300))
def test_arbitrary_bytes_never_500_or_hang(server: CoordinatorHttpServer, raw: bytes) -> None:
    answer = exchange(server, raw + b"\r\n\r\n")
    if answer:
        assert answer.startswith((b"HTTP/1.1 ", b"HTTP/1.0 ")), answer[:200]
        status = int(answer.split(b" ", 2)[1])
        assert status < 500 or status in (501, 505), answer[:300]
