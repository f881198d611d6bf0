"""A container process's query service: what its job coordinator asks of its stores while it runs.

``POST /get`` with ``{"store", "key": <key bytes, base64>, "partition": n or null, "committed": bool}``
answers a :class:`~samza_nb.container.queries.KeyAnswer` as JSON; ``GET /stores/<store>/rows`` answers the
store's committed rows in this container as an Arrow IPC stream, with the store partitions they cover
(every task's of the container) in the header ``X-Samza-Partitions`` (:data:`~.reader.PARTITIONS_HEADER`).
Every request carries the container's own token (``Authorization: Bearer <token>``, made at start; the
container reports it to its coordinator with its URL); without it: 401. Errors are ``{"error": "..."}``:
400 a bad request, 404 an unknown store, 503 stores not open (yet: until every task's are open and
restored, or any more).
Requests are served on the server's threads, never on the container's loop (see :mod:`.queries`).
"""

from __future__ import annotations

import hmac
import json
import logging
import secrets
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from samza_nb.container.queries.reader import (
    PARTITIONS_HEADER,
    LookupRequest,
    StoreReader,
    error_status,
)
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.container.container import SamzaContainer

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
ARROW_STREAM = "application/vnd.apache.arrow.stream"


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # (a kept-alive client would wait for a delayed ACK: 40 ms)

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        length = self.headers.get("Content-Length", "0").strip()
        size = int(length) if length.isascii() and length.isdigit() else -1
        if not 0 <= size <= MAX_REQUEST_BYTES:
            self.close_connection = True
            self._answer(HTTPStatus.BAD_REQUEST, {"error": "a request needs a Content-Length up to 1 MiB"})
            return
        body = self.rfile.read(size) if size else b""
        scheme, _, given = self.headers.get("Authorization", "").strip().partition(" ")
        expected = self.server.token.encode()
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), expected
        ):
            self._answer(HTTPStatus.UNAUTHORIZED, {"error": "this container's query service needs its token"})
            return
        parts = [unquote(p) for p in urlsplit(self.path).path.strip("/").split("/")]
        try:
            if method == "POST" and parts == ["get"]:
                self._get(body)
            elif method == "GET" and len(parts) == 3 and parts[0] == "stores" and parts[2] == "rows":
                self._rows(parts[1])
            else:
                self._answer(HTTPStatus.NOT_FOUND, {"error": f"no such resource: {method} {self.path}"})
        except SamzaError as exc:
            self._answer(HTTPStatus(error_status(exc)), {"error": str(exc)})
        except Exception as exc:  # never a traceback to the client
            log.exception("query service: %s %s failed", method, self.path)
            self._answer(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})

    def _get(self, body: bytes) -> None:
        answer = LookupRequest.parse(body).answer(self.server.reader)
        self._answer(HTTPStatus.OK, answer.to_dict())

    def _rows(self, store: str) -> None:
        import pyarrow as pa

        table, partitions = self.server.reader.rows(store)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        covered = ",".join(str(p) for p in partitions)
        self._answer(HTTPStatus.OK, sink.getvalue().to_pybytes(), ARROW_STREAM, {PARTITIONS_HEADER: covered})

    def _answer(
        self,
        status: HTTPStatus,
        body: Any,
        kind: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("query service: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    reader: StoreReader
    token: str


class QueryServer:
    """Serves the stores of ``container`` on ``host`` (a free port) from daemon threads until ``stop``;
    :attr:`url` and :attr:`token` are what the container reports to its coordinator."""

    def __init__(self, container: SamzaContainer, host: str = "127.0.0.1", reach: str | None = None) -> None:
        self._reach = reach
        try:
            self._server = _Server((host, 0), _Handler)
        except OSError as exc:
            raise SamzaError(f"the container's query service cannot listen on {host}: {exc}") from None
        self._server.reader = StoreReader(container)
        self._server.token = secrets.token_urlsafe(24)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="samza-query-service", daemon=True
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://host:port``; ``host`` is ``reach`` when given (the address others reach it by), else
        the bound one."""
        bound, port = self._server.server_address[:2]
        name = self._reach or (bound.decode() if isinstance(bound, bytes) else str(bound))
        return f"http://{f'[{name}]' if ':' in name else name}:{port}"

    @property
    def token(self) -> str:
        """The token every request must carry."""
        return self._server.token

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


__all__ = ["ARROW_STREAM", "QueryServer"]
