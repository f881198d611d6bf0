"""The job coordinator's HTTP service (the standard library's ThreadingHTTPServer on a daemon thread).

``GET /`` the job model JSON, ``GET /locality`` container id -> host, ``GET /status`` every container's
last report, ``PUT`` (or ``POST``) ``/containers/<id>/status`` a container's report (answered
``{"ok": true, "control": {...}}``, the control state every container should be in, plus ``"stop": true``
once the coordinator asks its containers to stop, and ``"fenced": "<why>"`` once a newer driver took the job
over: stop without committing), ``GET /control`` that control state, ``POST /control`` a
control command (``{"pause": true|false, "set": {key: value}, "timeout": s}``, see
:func:`samza_nb.coordinator.control.run_command`). Every answer is JSON; errors are ``{"error": "..."}``
with 400, 404, 405, 411, 413 or 504 (a pause not confirmed in time), and an unexpected failure is a 500
whose body names the error but never carries a traceback.

The job's stores, while it runs (see :mod:`samza_nb.coordinator.store_queries`): ``GET
/stores/<store>/keys/<key>`` a key's live value (``?committed=true``: as of the last commit) with the
container, task and partition that answered (404 with ``"found": false`` when no partition has it);
``POST /stores/<store>/sql`` with a SELECT as the body (text, or JSON ``{"sql": "..."}``) answers
``{"columns": [...], "rows": [[...], ...]}`` over every container's committed rows. 503: a container
cannot be asked (not started, stopped).

Who can reach it: it binds 127.0.0.1 unless configured otherwise. Bound to any other address it requires
the job's token (generated at start unless given, handed to the containers in ``SAMZA_COORDINATOR_TOKEN``)
in an ``Authorization: Bearer <token>`` header on every request, compared in constant time; a request
without it, or with another, is answered 401 before anything else is read. The ``/stores`` routes always
require a token, also on a loopback address (state is data: any local user could read it otherwise): the
job's token, else one generated for them (:attr:`CoordinatorHttpServer.store_token`).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import secrets
import threading
from collections.abc import Callable, Collection, Mapping
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from samza_nb.container.queries import error_status
from samza_nb.coordinator.status import ContainerReport, StatusReportError
from samza_nb.coordinator.store_queries import sql_of_body
from samza_nb.errors import ConfigError, JobTimeoutError, SamzaError

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 1 << 20
"""Largest status report accepted (a report lists a container's tasks; 1 MiB is plenty)."""

SHUTDOWN_POLL_S = 0.05
"""How often the serving thread checks for ``stop`` (the stdlib's default, 0.5 s, slows every stop)."""

ROUTES = (
    "GET /, GET /locality, GET /status, PUT /containers/<id>/status, GET or POST /control, "
    "GET /stores/<store>/keys/<key>, POST /stores/<store>/sql"
)


class CoordinatorEndpoints(Protocol):
    """What the HTTP service serves; called on the server's threads, so implementations are thread-safe."""

    def job_model_json(self) -> bytes:
        """The job model as Samza's JSON."""
        ...

    def locality(self) -> Mapping[str, str]:
        """Container id -> host it last ran on."""
        ...

    def status(self) -> Mapping[str, Any]:
        """The job's status (JSON-ready)."""
        ...

    def container_ids(self) -> Collection[str]:
        """Ids of the job model's containers."""
        ...

    def report(self, report: ContainerReport) -> bool | None:
        """Take a container's report (raises SamzaError when it cannot be accepted); True when the
        container should stop gracefully (the answer then carries ``"stop": true``)."""
        ...

    def fenced(self) -> str | None:
        """Why the containers must stop without committing (a newer driver took the job over), else None."""
        ...

    def control(self) -> Mapping[str, Any]:
        """The control state every container should be in (JSON-ready)."""
        ...

    def command(self, command: Mapping[str, Any]) -> Mapping[str, Any]:
        """Apply a control command; its answer (ConfigError: a bad command, JobTimeoutError: a pause not
        confirmed in time)."""
        ...

    def store_key(self, store: str, key: str, committed: bool) -> Mapping[str, Any]:
        """A key lookup's answer (``found`` says whether any partition had it); SamzaError: an unknown
        store or a key its serde refuses, StoreNotReady: a container cannot be asked."""
        ...

    def store_sql(self, store: str, sql: str) -> Mapping[str, Any]:
        """``{"columns", "rows"}`` of ``sql`` over the store (errors as :meth:`store_key`)."""
        ...


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # (a kept-alive client would wait for a delayed ACK: 40 ms)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The stdlib's own errors (a malformed request line, an unknown method) as JSON too."""
        self.close_connection = True
        if self.request_version == "HTTP/0.9":  # unparsable request: still answer with a status line
            self.request_version = "HTTP/1.0"
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self._json(status, {"error": message or status.phrase})

    def _dispatch(self, method: str) -> None:
        if self.request_version == "HTTP/0.9":  # "GET /path" without a version: no headers, no token
            self.send_error(HTTPStatus.BAD_REQUEST, "a request line needs an HTTP version (HTTP/1.x)")
            return
        stores = urlsplit(self.path).path.startswith("/stores/")
        if not self._authorised(self.server.store_token if stores else self.server.token):
            self._discard_body()
            self._json(
                HTTPStatus.UNAUTHORIZED,
                {"error": "this job coordinator needs its job's token (Authorization: Bearer <token>)"},
                {"WWW-Authenticate": "Bearer"},
            )
            return
        try:
            if stores:
                self._stores(method)
                return
            self._route(method, unquote(urlsplit(self.path).path))
        except Exception as exc:  # never a traceback to the client
            log.exception("job coordinator: %s %s failed", method, self.path)
            self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {type(exc).__name__}"})

    def _authorised(self, expected: str | None) -> bool:
        if expected is None:
            return True
        given = self.headers.get("Authorization", "")
        scheme, _, value = given.strip().partition(" ")
        if scheme.lower() != "bearer":
            return False
        return hmac.compare_digest(value.strip().encode("utf-8", "replace"), expected.encode())

    def _route(self, method: str, path: str) -> None:
        endpoints = self.server.endpoints
        reads: dict[str, Any] = {
            "/": endpoints.job_model_json,
            "/locality": lambda: dict(endpoints.locality()),
            "/status": lambda: dict(endpoints.status()),
            "/control": lambda: dict(endpoints.control()),
        }
        parts = path.strip("/").split("/")
        if path.rstrip("/") == "/control" and method == "POST":
            self._take_command()
        elif path in reads or (len(path) > 1 and path.rstrip("/") in reads):
            if method != "GET":
                self._refuse_method(method, path, "GET")
                return
            body = reads[path if path in reads else path.rstrip("/")]()
            self._json(HTTPStatus.OK, body)
        elif len(parts) == 3 and parts[0] == "containers" and parts[2] == "status":
            if method not in ("PUT", "POST"):
                self._refuse_method(method, path, "PUT, POST")
                return
            self._take_report(parts[1])
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such resource: {path} (this serves {ROUTES})"})

    def _stores(self, method: str) -> None:
        """``GET /stores/<store>/keys/<key>``, ``POST /stores/<store>/sql`` (see the module)."""
        url = urlsplit(self.path)
        parts = [unquote(p) for p in url.path.split("/")[2:]]  # each part unquoted: a key may hold "/"
        endpoints = self.server.endpoints
        if len(parts) == 3 and parts[1] == "keys" and method == "GET":
            flag = parse_qs(url.query).get("committed", ["false"])[-1].lower()
            answer = self._store_call(lambda: endpoints.store_key(parts[0], parts[2], flag in ("1", "true")))
            if answer is not None:
                found = answer.get("found") is True
                self._json(HTTPStatus.OK if found else HTTPStatus.NOT_FOUND, dict(answer))
        elif len(parts) == 2 and parts[1] == "sql" and method == "POST":
            body = self._body("a store query")
            if body is None:
                return
            answer = self._store_call(lambda: endpoints.store_sql(parts[0], sql_of_body(body)))
            if answer is not None:
                self._json(HTTPStatus.OK, dict(answer))
        else:
            self._discard_body()
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such resource: {method} {url.path} ({ROUTES})"})

    def _store_call(self, call: Callable[[], Mapping[str, Any]]) -> Mapping[str, Any] | None:
        try:
            return call()
        except SamzaError as exc:
            self._json(HTTPStatus(error_status(exc)), {"error": str(exc)})
            return None

    def _take_command(self) -> None:
        body = self._body("a control command")
        if body is None:
            return
        try:
            command = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": f"a control command must be JSON: {exc}"})
            return
        if not isinstance(command, dict):
            self._json(HTTPStatus.BAD_REQUEST, {"error": "a control command must be a JSON object"})
            return
        try:
            answer = self.server.endpoints.command(command)
        except ConfigError as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
        except JobTimeoutError as exc:
            self._json(HTTPStatus.GATEWAY_TIMEOUT, {"error": str(exc)})
        except SamzaError as exc:
            self._json(HTTPStatus.CONFLICT, {"error": str(exc)})
        else:
            self._json(HTTPStatus.OK, dict(answer))

    def _body(self, what: str) -> bytes | None:
        """The request's body; None when it was refused (answered 411 or 413)."""
        length_header = self.headers.get("Content-Length")
        if length_header is None or not (length_header.strip().isascii() and length_header.strip().isdigit()):
            self.close_connection = True
            self._json(HTTPStatus.LENGTH_REQUIRED, {"error": f"{what} needs a Content-Length"})
            return None
        length = int(length_header)
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            self._json(
                HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                {"error": f"{what} of {length} bytes is larger than {MAX_BODY_BYTES}"},
            )
            return None
        return self.rfile.read(length)

    def _take_report(self, container_id: str) -> None:
        if container_id not in self.server.endpoints.container_ids():
            self._discard_body()
            known = ", ".join(sorted(self.server.endpoints.container_ids()))
            self._json(
                HTTPStatus.NOT_FOUND, {"error": f"no container {container_id!r} (containers: {known})"}
            )
            return
        body = self._body("a status report")
        if body is None:
            return
        try:
            stop = self.server.endpoints.report(ContainerReport.from_json(container_id, body))
        except StatusReportError as exc:
            self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        except SamzaError as exc:
            self._json(HTTPStatus.CONFLICT, {"error": str(exc)})
            return
        answer: dict[str, Any] = {"ok": True, "control": dict(self.server.endpoints.control())}
        fenced = self.server.endpoints.fenced()
        if stop or fenced:
            answer["stop"] = True
        if fenced:
            answer["fenced"] = fenced
        self._json(HTTPStatus.OK, answer)

    def _discard_body(self) -> None:
        length = self.headers.get("Content-Length", "0").strip()
        if length.isascii() and length.isdigit() and int(length) <= MAX_BODY_BYTES:
            self.rfile.read(int(length))
        else:
            self.close_connection = True

    def _refuse_method(self, method: str, path: str, allowed: str) -> None:
        self._discard_body()
        self._json(
            HTTPStatus.METHOD_NOT_ALLOWED,
            {"error": f"{method} is not allowed on {path} (allowed: {allowed})"},
            {"Allow": allowed},
        )

    def _json(self, status: HTTPStatus, body: Any, headers: Mapping[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("job coordinator http: " + format, *args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    endpoints: CoordinatorEndpoints
    token: str | None
    store_token: str


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback address or ``localhost`` (only this machine can reach it)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip().strip("[]")).is_loopback
    except ValueError:
        return False


class CoordinatorHttpServer:
    """Serves ``endpoints`` on ``host``:``port`` (0 = a free port) from a daemon thread until ``stop``.

    On a loopback ``host`` no token is needed unless ``token`` is given; on any other address every
    request must carry ``token`` (a fresh random one when None, see :attr:`token`) or gets 401."""

    def __init__(
        self,
        endpoints: CoordinatorEndpoints,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
    ) -> None:
        if token is None and not is_loopback(host):
            token = secrets.token_urlsafe(32)
        if token is not None and (not token or not token.isascii() or not token.isprintable()):
            raise SamzaError("the job coordinator's token must be non-empty printable ASCII")
        try:
            self._server = _Server((host, port), _Handler)
        except OSError as exc:
            raise SamzaError(
                f"the job coordinator cannot listen on {host}:{port}: {exc.strerror or exc}"
            ) from None
        self._server.endpoints = endpoints
        self._server.token = token
        self._server.store_token = token or secrets.token_urlsafe(32)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            args=(SHUTDOWN_POLL_S,),
            name="samza-job-coordinator-http",
            daemon=True,
        )
        self._thread.start()

    @property
    def url(self) -> str:
        """``http://host:port`` of the running server."""
        host, port = self._server.server_address[:2]
        text = host.decode() if isinstance(host, bytes) else str(host)
        return f"http://{f'[{text}]' if ':' in text else text}:{port}"

    @property
    def token(self) -> str | None:
        """The token every request must carry (None: none needed, the server is loopback-only)."""
        return self._server.token

    @property
    def store_token(self) -> str:
        """The token the ``/stores`` routes need (:attr:`token` when there is one, else one of their own)."""
        return self._server.store_token

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
            self._thread.join()
        self._server.server_close()


__all__ = ["MAX_BODY_BYTES", "CoordinatorEndpoints", "CoordinatorHttpServer", "is_loopback"]
