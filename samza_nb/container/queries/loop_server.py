"""A container process's live query service: the lookups of live values (and its event time), served on
the container's own event loop, next to its state-file service (:mod:`.server`).

``POST /get`` with ``{"store", "key": <key bytes, base64>, "partition": n or null, "committed": bool}``
answers a :class:`~samza_nb.container.queries.KeyAnswer` as JSON; ``GET /time`` the container's event time
(its :class:`TimeSource`). Every request carries the container's query token (the one its state-file
service takes: ``Authorization: Bearer <token>``); without it: 401. Errors are ``{"error": "..."}``: 400 a
bad request, 404 an unknown store or resource, 503 stores not open (yet, or any more).

Why on the loop (HTTP/1.1, kept-alive connections, TCP_NODELAY): a live value is read on the loop anyway,
between two slices of messages. Served by a thread, a lookup waited for the interpreter lock to read the
request, for the loop's turn, then for the lock again to answer; each hand-over of the lock in a process
busy processing costs up to a scheduling quantum on a loaded machine. Here the request is read, looked up
and answered at the loop's next turn, in one step (about 0.1 ms of the loop's time). A committed value is
read from the state files on a worker thread. What must answer while the loop is busy in one long step
(opening or restoring the stores), the committed rows for SQL, stays on the state-file service's threads.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlsplit

from samza_nb.container.queries.reader import LookupRequest, StoreReader, error_status
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.container.container import SamzaContainer

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
MAX_HEAD_BYTES = 1 << 16

_Answer = tuple[HTTPStatus, bytes, str]
"""Status, body and content type."""


class TimeSource(Protocol):
    """What answers ``GET /time``: the container's event time, JSON-ready (called on its loop thread)."""

    def json(self) -> Any:
        """The event time now."""
        ...

    def close(self) -> None:
        """The service stopped."""
        ...


class _Request:
    """One parsed request: method, path, headers (lower-case names) and body."""

    __slots__ = ("body", "close", "headers", "method", "path")

    def __init__(self, method: str, path: str, headers: dict[str, str], body: bytes, close: bool) -> None:
        self.method, self.path, self.headers, self.body, self.close = method, path, headers, body, close


class _Service:
    """What the connections share: the reader, the time probe and the token."""

    def __init__(self, reader: StoreReader, time: TimeSource | None, token: str) -> None:
        self.reader = reader
        self.time = time
        self.token = token.encode()

    def answer(self, request: _Request) -> _Answer | Callable[[], _Answer]:
        """The answer of ``request``, or a call that makes it off the loop (it reads state files)."""
        scheme, _, given = request.headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), self.token
        ):
            return _json(HTTPStatus.UNAUTHORIZED, {"error": "this container's query service needs its token"})
        parts = [unquote(p) for p in urlsplit(request.path).path.strip("/").split("/")]
        try:
            if request.method == "POST" and parts == ["get"]:
                return self._get(request.body)
            if request.method == "GET" and parts == ["time"] and self.time is not None:
                return _json(HTTPStatus.OK, self.time.json())  # on the loop, where the tasks run
            missing = f"no such resource: {request.method} {request.path}"
            return _json(HTTPStatus.NOT_FOUND, {"error": missing})
        except SamzaError as exc:
            return _json(HTTPStatus(error_status(exc)), {"error": str(exc)})

    def _get(self, body: bytes) -> _Answer | Callable[[], _Answer]:
        request = LookupRequest.parse(body)
        lookup = functools.partial(request.answer, self.reader)
        if request.committed:  # reads the state files: off the loop
            return functools.partial(_guarded, lambda: _json(HTTPStatus.OK, lookup().to_dict()))
        return _json(HTTPStatus.OK, lookup().to_dict())  # live: here, on the loop, between two slices


def _json(status: HTTPStatus, body: Any) -> _Answer:
    return status, json.dumps(body, separators=(",", ":")).encode(), "application/json"


def _guarded(call: Callable[[], _Answer]) -> _Answer:
    """``call``'s answer; a SamzaError as its status, anything else a 500 naming it (never a traceback)."""
    try:
        return call()
    except SamzaError as exc:
        return _json(HTTPStatus(error_status(exc)), {"error": str(exc)})
    except Exception as exc:
        log.exception("query service: a request failed")
        return _json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})


class _Connection(asyncio.Protocol):
    """One kept-alive connection: requests answered one after another, in order."""

    def __init__(self, service: _Service) -> None:
        self._service = service
        self._buffer = bytearray()
        self._transport: asyncio.Transport | None = None
        self._busy = False  # a request is being answered off the loop: the next ones wait in the buffer

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._transport = None

    def data_received(self, data: bytes) -> None:
        self._buffer += data
        self._serve()

    def _serve(self) -> None:
        while not self._busy and self._transport is not None:
            request = self._next_request()
            if request is None:
                return
            try:
                answer = self._service.answer(request)
            except Exception as exc:  # never a traceback to the client
                log.exception("query service: %s %s failed", request.method, request.path)
                answer = _json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"{type(exc).__name__}: {exc}"})
            if isinstance(answer, tuple):
                self._send(answer, request.close)
                continue
            self._busy = True
            future = asyncio.get_running_loop().run_in_executor(None, answer)
            future.add_done_callback(functools.partial(self._answered, request.close))

    def _answered(self, close: bool, future: asyncio.Future[_Answer]) -> None:
        self._busy = False
        if future.cancelled():
            self._close()
            return
        self._send(future.result(), close)
        self._serve()

    def _next_request(self) -> _Request | None:
        """The next whole request in the buffer (None: not all here yet; a bad one is answered 400)."""
        buffer = self._buffer
        end = buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(buffer) > MAX_HEAD_BYTES:
                self._refuse("a request's head is larger than 64 KiB")
            return None
        lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
        words = lines[0].split()
        if len(words) != 3 or not words[2].startswith("HTTP/1."):
            self._refuse(f"not an HTTP/1.x request line: {lines[0][:80]!r}")
            return None
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = headers.get("content-length", "0")
        size = int(length) if length.isascii() and length.isdigit() else -1
        if not 0 <= size <= MAX_REQUEST_BYTES:
            self._refuse("a request needs a Content-Length up to 1 MiB")
            return None
        if len(buffer) < end + 4 + size:
            return None
        body = bytes(buffer[end + 4 : end + 4 + size])
        del buffer[: end + 4 + size]
        connection = headers.get("connection", "").lower()
        close = connection == "close" or (words[2] == "HTTP/1.0" and connection != "keep-alive")
        return _Request(words[0], words[1], headers, body, close)

    def _refuse(self, error: str) -> None:
        self._send(_json(HTTPStatus.BAD_REQUEST, {"error": error}), True)

    def _send(self, answer: _Answer, close: bool) -> None:
        transport = self._transport
        if transport is None:
            return
        status, data, kind = answer
        head = (
            f"HTTP/1.1 {status.value} {status.phrase}\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {len(data)}\r\n{'Connection: close' if close else 'Connection: keep-alive'}"
            "\r\n\r\n"
        )
        transport.write(head.encode() + data)  # one write: one segment for a small answer
        if close:
            self._close()

    def _close(self) -> None:
        self._buffer.clear()
        if self._transport is not None:
            self._transport.close()
            self._transport = None


class LiveQueryServer:
    """Serves the live values (and event time) of ``container`` on ``host`` (a free port) on the running
    event loop (the container's, see the module) from :meth:`open` until :meth:`stop`; :attr:`url` is what
    the container reports to its coordinator (with the token of its state-file service)."""

    def __init__(self, server: asyncio.Server, service: _Service, reach: str | None) -> None:
        self._server = server
        self._service = service
        self._token = service.token.decode()
        bound, port = server.sockets[0].getsockname()[:2]
        name = reach or str(bound)
        self._url = f"http://{f'[{name}]' if ':' in name else name}:{port}"

    @classmethod
    async def open(
        cls,
        container: SamzaContainer,
        token: str,
        host: str = "127.0.0.1",
        reach: str | None = None,
        time: TimeSource | None = None,
    ) -> LiveQueryServer:
        """Listen on ``host`` (a free port) on the running loop for requests carrying ``token``; ``reach``:
        the address others reach it by; ``time``: what answers ``GET /time`` (404 without it)."""
        service = _Service(StoreReader(container), time, token)
        loop = asyncio.get_running_loop()
        try:
            server = await loop.create_server(lambda: _Connection(service), host, 0)
        except OSError as exc:
            raise SamzaError(f"the container's query service cannot listen on {host}: {exc}") from None
        return cls(server, service, reach)

    @property
    def url(self) -> str:
        """``http://host:port``; ``host`` is ``reach`` when given (the address others reach it by), else
        the bound one."""
        return self._url

    @property
    def token(self) -> str:
        """The token every request must carry."""
        return self._token

    def stop(self) -> None:
        """Stop listening and release the port (idempotent); open connections are closed by the loop's end."""
        self._server.close()
        if self._service.time is not None:
            self._service.time.close()


__all__ = ["LiveQueryServer", "TimeSource"]
