"""Queries into the stores (and the event time) of a running job of several containers, through its job
coordinator.

Each running container reports where its query service listens (:mod:`samza_nb.container.queries.server`).
A point lookup goes to the container whose task owns the partition the key hashes to (the partitioner of
keyed input messages, over the job's task partitions); when the key is not there, the job's other
containers are asked too, so a key a task keeps under another partition is still found, and the answer
names the container, task and partition that answered. SQL gathers every container's committed rows of
the store and runs over their union in a scratch DuckDB, here. The union is whole or refused: a container
that cannot answer (not started, its stores still opening, stopped, not answering within
``REQUEST_TIMEOUT_S``) or that answers for other partitions than the job model gives it fails the query
with one line naming it; no part is ever left out of an answer. The event time is each
container's own (``GET /time``), gathered for the notebook's ``%samza_time`` to combine. Live lookups and
the event time go to the service a container runs on its loop (its ``live_url``), the rest to the one
that reads its state files on threads.

Connections to the containers are kept open (HTTP/1.1 keep-alive) for the next request.
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from samza_nb.container.queries import (
    PARTITIONS_HEADER,
    KeyAnswer,
    SerdeCache,
    StoreNotReady,
    UnknownStore,
    key_bytes,
    owning_partition,
    store_serdes,
)
from samza_nb.errors import SamzaError
from samza_nb.serde.builtin import BytesSerde, IntSerde, JsonSerde, LongSerde

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.config import Config
    from samza_nb.coordinator.status import JobStatus
    from samza_nb.serde.base import Serde
    from samza_nb.storage.sql.results import QueryResult

REQUEST_TIMEOUT_S = 10.0


class StoreQueries:
    """Point lookups and SQL over the stores of the job whose ``config``, ``model`` and ``status`` (every
    container's last report) are given; safe from any thread."""

    def __init__(
        self, config: Config, model: Callable[[], JobModel], status: Callable[[], JobStatus]
    ) -> None:
        self._config = config
        self._model = model
        self._status = status
        self._serdes = SerdeCache(config)
        self._idle: dict[str, list[http.client.HTTPConnection]] = {}
        self._lock = threading.Lock()

    # -- point lookups ----------------------------------------------------------------------------------
    def get(self, store: str, key: Any, *, committed: bool = False) -> KeyAnswer:
        """``key`` in ``store``: its live value (uncommitted writes included) or, ``committed``, its value
        as of the last commit; asked of the owning container first (see the module)."""
        self._refuse_unknown(store)
        raw = key_bytes(self._serdes.of(store)[0], store, key)
        model = self._model()
        partition = owning_partition(raw, model.max_changelog_partitions)
        owner = next(
            (
                cid
                for cid, c in model.containers.items()
                for t in c.tasks.values()
                if t.changelog_partition == partition
            ),
            None,
        )
        holding = [cid for cid, c in model.containers.items() if c.tasks]  # (no tasks: no stores)
        order = sorted(holding, key=lambda cid: (cid != owner, len(cid), cid))
        request = {"store": store, "key": base64.b64encode(raw).decode(), "committed": committed}
        searched: list[int] = []
        for cid in order:
            body = json.dumps({**request, "partition": partition}).encode()
            answer = KeyAnswer.from_dict(json.loads(self._ask(cid, "POST", "/get", body, live=not committed)))
            searched += answer.searched
            if answer.found:
                return KeyAnswer(
                    store,
                    key,
                    True,
                    answer.value,
                    committed,
                    cid,
                    answer.task,
                    answer.partition,
                    tuple(searched),
                )
        return KeyAnswer(store, key, False, None, committed, searched=tuple(searched))

    def get_text(self, store: str, text: str, *, committed: bool = False) -> KeyAnswer:
        """:meth:`get` of a key given as text (a URL's, a magic's), read as the store's key serde reads:
        ``int``/``long`` a number, ``json`` a JSON document (else the text itself), ``bytes`` its UTF-8
        bytes, ``string`` and others the text."""
        key = key_of_text(self._config, store, text, self._serdes.of(store)[0])
        return self.get(store, key, committed=committed)

    # -- SQL --------------------------------------------------------------------------------------------
    def sql(self, store: str, sql: str) -> QueryResult:
        """``sql`` over the union of every container's committed rows of ``store`` (the relation
        ``<store>(key, value, partition)``); a :class:`StoreNotReady` naming the container when one of
        them cannot give its part (see the module): never an answer without it."""
        import pyarrow as pa

        from samza_nb.storage.sql.query import query_tables

        self._refuse_unknown(store)
        model = self._model()
        tables = []
        for cid in sorted(model.containers, key=lambda c: (len(c), c)):
            owned = sorted(t.changelog_partition for t in model.containers[cid].tasks.values())
            if not owned:
                continue  # a container without tasks holds no part of any store
            data, headers = self._request(cid, "GET", f"/stores/{quote(store, safe='')}/rows")
            covered = _partition_list(headers.get(PARTITIONS_HEADER))
            if covered != owned:
                raise StoreNotReady(
                    f"container {cid} answered for partitions {_listed(covered)} of store {store!r}, not for "
                    f"its partitions {_listed(owned)} in the job model: refusing an answer without them"
                )
            tables.append(pa.ipc.open_stream(data).read_all())
        if not tables:
            raise SamzaError(f"no container of the job holds a partition of store {store!r}")
        return query_tables(tables, store, sql)

    # -- event time -------------------------------------------------------------------------------------
    def times(self) -> dict[str, Any]:
        """Each running container's event time now (container id -> its JSON, which
        :func:`samza_nb.operators.impl.time_probe.time_of_json` reads), asked of each; StoreNotReady
        naming a container that cannot be asked."""
        return {
            cid: json.loads(self._ask(cid, "GET", "/time", live=True))
            for cid in sorted(self._model().containers, key=lambda c: (len(c), c))
        }

    def committed_anything(self) -> bool:
        """True when some task of a running container has committed offsets (or started from some)."""
        return any(
            p.get("committed-offset") is not None
            for report in self._status().reports.values()
            for task in report.tasks
            for p in task.get("partitions", ())
        )

    # -- plumbing ---------------------------------------------------------------------------------------
    def _refuse_unknown(self, store: str) -> None:
        if not self._config.get_str(f"stores.{store}.factory", ""):
            known = sorted({k.split(".")[1] for k in self._config if _is_store_factory(k)})
            raise UnknownStore(f"no store {store!r} in this job (stores: {', '.join(known) or 'none'})")

    def _endpoint(self, cid: str, live: bool) -> tuple[str, str]:
        """The URL and token of container ``cid``'s query service: ``live``, the one on its loop when it
        reported one (live lookups, event time), else its state-file one."""
        report = self._status().reports.get(cid)
        if report is None or report.final or not report.query_url or not report.query_token:
            state = "not reported yet" if report is None else str(report.state)
            raise StoreNotReady(
                f"container {cid} cannot be asked about its stores ({state}): it has not started its query "
                "service, or it stopped"
            )
        return (report.live_url if live and report.live_url else report.query_url), report.query_token

    def _ask(
        self, cid: str, method: str, path: str, body: bytes | None = None, *, live: bool = False
    ) -> bytes:
        return self._request(cid, method, path, body, live=live)[0]

    def _request(
        self, cid: str, method: str, path: str, body: bytes | None = None, *, live: bool = False
    ) -> tuple[bytes, http.client.HTTPMessage]:
        """Container ``cid``'s answer (body and headers) when it is 200, else the error it names."""
        url, token = self._endpoint(cid, live)
        headers = {"Authorization": f"Bearer {token}", "Content-Length": str(len(body or b""))}
        for attempt in (1, 2):  # a kept-alive connection the container closed meanwhile: once more
            conn = self._connection(url)
            try:
                conn.request(method, path, body, headers)
                response = conn.getresponse()
                data = response.read()
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                conn.close()
                if attempt == 2 or not isinstance(exc, ConnectionError | http.client.RemoteDisconnected):
                    raise StoreNotReady(f"container {cid} at {url} did not answer: {exc}") from None
                continue
            self._release(url, conn, response.will_close)
            if response.status == 200:
                return data, response.headers
            try:
                error = str(json.loads(data).get("error", data[:200]))
            except (ValueError, AttributeError):
                error = data[:200].decode(errors="replace")
            kinds = {503: StoreNotReady, 404: UnknownStore}
            named = error if error.startswith(f"container {cid} ") else f"container {cid}: {error}"
            raise kinds.get(response.status, SamzaError)(named)
        raise AssertionError("unreachable")

    def _connection(self, url: str) -> http.client.HTTPConnection:
        with self._lock:
            idle = self._idle.get(url)
            if idle:
                return idle.pop()
        parts = urlsplit(url)
        return http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=REQUEST_TIMEOUT_S
        )

    def _release(self, url: str, conn: http.client.HTTPConnection, closing: bool) -> None:
        if closing:
            conn.close()
            return
        with self._lock:
            self._idle.setdefault(url, []).append(conn)

    def close(self) -> None:
        """Close the kept-alive connections."""
        with self._lock:
            for conns in self._idle.values():
                for conn in conns:
                    conn.close()
            self._idle.clear()


def sql_of_body(body: bytes) -> str:
    """The SQL of a ``POST /stores/<store>/sql`` body: JSON ``{"sql": "..."}``, else the text itself."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    return str(data["sql"]) if isinstance(data, dict) and "sql" in data else text


def _partition_list(header: str | None) -> list[int] | None:
    """The partitions a rows answer names (None when it names none, or not as numbers)."""
    try:
        return sorted(int(p) for p in header.split(",") if p.strip()) if header is not None else None
    except ValueError:
        return None


def _listed(partitions: list[int] | None) -> str:
    return "none" if not partitions else ", ".join(str(p) for p in partitions)


def _is_store_factory(key: str) -> bool:
    return key.startswith("stores.") and key.endswith(".factory") and key.count(".") == 2


def key_of_text(config: Config, store: str, text: str, serde: Serde | None = None) -> Any:
    """A key given as text, as the store's key serde (``serde`` when given) takes it (see
    :meth:`StoreQueries.get_text`)."""
    if serde is None:
        serde = store_serdes(config, store)[0]
    if isinstance(serde, IntSerde | LongSerde):
        try:
            return int(text)
        except ValueError:
            raise SamzaError(
                f"store {store!r} has integer keys ({type(serde).__name__}); {text!r} is not one"
            ) from None
    if isinstance(serde, JsonSerde):
        try:
            return json.loads(text)
        except ValueError:
            return text
    if isinstance(serde, BytesSerde):
        return text.encode()
    return text


__all__ = ["StoreQueries", "key_of_text", "sql_of_body"]
