"""The container's client of the coordinator reads whatever a server answers without a deep traceback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from samza_nb.coordinator.client import CoordinatorUnreachable, fetch_job_model, send_report
from samza_nb.coordinator.status import ContainerReport

DEEP = b"[" * 200_000 + b"]" * 200_000
DEEP_ERROR = b'{"error": ' + DEEP + b"}"


class Answers(BaseHTTPRequestHandler):
    status = 200
    body = DEEP

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(self.status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_PUT = _answer

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Answers)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def url(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}"


REPORT = ContainerReport(container_id="0", host="h", state="running", processed=1)


def test_a_deeply_nested_status_answer_is_not_a_stop(server: ThreadingHTTPServer) -> None:
    Answers.status, Answers.body = 200, DEEP
    assert send_report(url(server), REPORT) is False


def test_a_deeply_nested_error_answer_is_unreachable_naming_the_code(server: ThreadingHTTPServer) -> None:
    Answers.status, Answers.body = 500, DEEP_ERROR
    with pytest.raises(CoordinatorUnreachable, match="answered 500"):
        send_report(url(server), REPORT)


def test_a_deeply_nested_job_model_is_a_clear_error(server: ThreadingHTTPServer) -> None:
    Answers.status, Answers.body = 200, DEEP
    with pytest.raises(Exception, match="is not a job model") as raised:
        fetch_job_model(url(server), 10.0)
    assert not isinstance(raised.value, RecursionError)
