"""The job coordinator: computes the job model from the coordinator stream and the inputs, persists it, and
serves it (and the containers' status) over HTTP to the job's containers."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Collection, Mapping
from typing import Any

from samza_nb import crash_points
from samza_nb.api.job_model import JobModel
from samza_nb.checkpoint.carry_over import carry_over_default_checkpoints
from samza_nb.config import Config
from samza_nb.container.inputs import input_metadata, input_streams, start_feeding, stop_feeding
from samza_nb.container.queries import plain
from samza_nb.coordinator.changes import refuse_incompatible_change
from samza_nb.coordinator.control import ControlState, JobControl, run_command
from samza_nb.coordinator.driver_claim import DriverLease
from samza_nb.coordinator.http_server import CoordinatorHttpServer
from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.coordinator.status import ContainerReport, JobStatus
from samza_nb.coordinator.store_queries import StoreQueries
from samza_nb.coordinator.stream_store import coordinator_stream_name
from samza_nb.coordinator.stream_sync import SOURCE, CoordinatorStore, default_store, stream_changes
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.observe.states import RunOutcome
from samza_nb.systems.base import SystemAdmin
from samza_nb.systems.registry import system_factory

log = logging.getLogger(__name__)

SET_TIMEOUT_S = 5.0
"""How long ``set`` waits for the running containers to apply a change (and say whether they refuse)."""


class JobCoordinator:
    """Owns a job's model. ``await start()`` bootstraps the coordinator stream, writes the submitted config
    (set-config for changed keys, deletes for keys no longer set), reads the inputs' partitions, computes
    the job model keeping the stream's changelog mappings (refusing a grouper or partition-count change of
    a stateful job), persists set-changelog and set-task-container-assignment, and starts the HTTP service
    at :attr:`url`. Containers report their status to it; :meth:`job_status` is the job's view.
    :meth:`request_stop` asks every container to stop gracefully: the answer to each report says so from
    then on. A container may report again after it reported "failed" or from a new process (a retried
    attempt): its earlier attempts' messages stay counted; a process's running reports handled after its final
    one are ignored. :meth:`pause`, :meth:`resume` and :meth:`set` steer every container the same way
    (each learns it on its next report, see :mod:`samza_nb.coordinator.control`). ``await stop()`` stops
    serving and closes the
    stream. ``token``: the token every request must carry, also on a loopback address (default: one is
    generated when the service binds another address, else none is needed)."""

    def __init__(
        self, config: Config, *, store: CoordinatorStore | None = None, token: str | None = None
    ) -> None:
        self.config = config.validate()
        self._token = token
        self._store = store if store is not None else default_store(self.config)
        self._model: JobModel | None = None
        self._model_json = b""
        self._server: CoordinatorHttpServer | None = None
        self._lock = threading.Lock()
        self._status: JobStatus | None = None
        self._hosts: dict[str, str] = {}
        self._admins: dict[str, SystemAdmin] = {}
        self._feeding: list[str] = []  # systems whose feeds it started (after planning)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._writes: list[concurrent.futures.Future[None]] = []
        self._catch_up: asyncio.Task[None] | None = None
        self._started_store = False
        self._stop_requested = False
        self._completed: dict[str, int | None] = {}  # container id -> the pid that completed its work
        self._control = JobControl(self._confirmations)
        self._lease: DriverLease | None = None
        self._renewing: asyncio.Task[None] | None = None
        self._queries: StoreQueries | None = None

    @property
    def job_model(self) -> JobModel:
        """The job model (after :meth:`start`)."""
        if self._model is None:
            raise SamzaError("the job coordinator has not started: no job model yet")
        return self._model

    @property
    def url(self) -> str:
        """The HTTP service's URL (after :meth:`start`), what containers get in SAMZA_COORDINATOR_URL."""
        if self._server is None:
            raise SamzaError("the job coordinator has not started: it serves no URL yet")
        return self._server.url

    @property
    def token(self) -> str | None:
        """The token requests need (after :meth:`start`; None when the service is loopback-only), what
        containers get in SAMZA_COORDINATOR_TOKEN."""
        if self._server is None:
            raise SamzaError("the job coordinator has not started: it has no token yet")
        return self._server.token

    @property
    def store_token(self) -> str:
        """The token the ``/stores`` routes need, also on a loopback address (after :meth:`start`)."""
        if self._server is None:
            raise SamzaError("the job coordinator has not started: it has no token yet")
        return self._server.store_token

    @property
    def queries(self) -> StoreQueries:
        """Point lookups and SQL over the running job's stores (:mod:`.store_queries`)."""
        if self._queries is None:
            self._queries = StoreQueries(self.config, lambda: self.job_model, self.job_status)
        return self._queries

    async def start(self) -> None:
        """Bootstrap, compute and persist the job model, and serve it (see the class)."""
        self._loop = asyncio.get_running_loop()
        store, config = self._store, self.config
        await store.start()
        self._started_store = True
        lease = DriverLease(store, config)
        await lease.claim()
        self._lease = lease
        previous_config = store.config()
        previous_changelog = store.changelog_mapping()
        inputs = input_streams(config)
        admins = {s: system_factory(config, s).get_admin(s, config) for s in {i.system for i in inputs}}
        ssps = list(await input_metadata(inputs, admins))
        model = plan_job_model(config, ssps, previous_changelog)
        stream = coordinator_stream_name(config.job_name(), config.job_id())
        refuse_incompatible_change(config, previous_config, previous_changelog, model.tasks, ssps, stream)
        configs, changelogs, assignments = stream_changes(
            config, previous_config, previous_changelog, store.task_containers(), model
        )
        # In this order, each durable before the next: a crash between them leaves a stream the next
        # start reads and completes (what it finds written is what it would write again).
        await store.send(configs)
        if crash_points.ARMED:
            crash_points.reached("coordinator.config-written")
        await store.send(changelogs)
        if crash_points.ARMED:
            crash_points.reached("coordinator.set-changelog-written")
        await store.send(assignments)
        if crash_points.ARMED:
            crash_points.reached("coordinator.assignment-written")
        self._admins = admins
        await start_feeding(admins, inputs, self._feeding)
        partitions = {name: task.changelog_partition for name, task in model.tasks.items()}
        carried = await carry_over_default_checkpoints(config, partitions)
        if carried:
            log.info("carried the checkpoints of %d tasks over to the default checkpoint store", len(carried))
        self._model = model
        self._model_json = model.to_json().encode()
        self._hosts = {cid: host for cid, host in store.container_hosts().items() if cid in model.containers}
        self._status = JobStatus(config.job_name(), tuple(model.containers))
        self._server = CoordinatorHttpServer(
            _Endpoints(self),
            config.value("cluster-manager.jobcoordinator.host"),
            config.value("cluster-manager.jobcoordinator.url.port"),
            token=self._token,
        )
        interval = config.value("job.coordinator.catchup.ms")
        if interval > 0:
            self._catch_up = asyncio.create_task(self._keep_catching_up(interval / 1000))
        self._renewing = asyncio.create_task(lease.keep())
        log.info("job coordinator of %s serves %s", config.job_name(), self._server.url)

    def job_status(self) -> JobStatus:
        """A snapshot of every container's last report."""
        with self._lock:
            if self._status is None:
                raise SamzaError("the job coordinator has not started: no status yet")
            return self._status.copy()

    @property
    def fenced(self) -> str | None:
        """One line saying that a newer driver took the job over (None while this one holds it)."""
        return self._lease.fenced if self._lease is not None else None

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`request_stop` was called."""
        return self._stop_requested

    def request_stop(self) -> None:
        """Ask every container to stop gracefully (each commits and exits): the answer to every report from
        now on carries ``"stop": true``. Safe from any thread; it cannot be taken back."""
        self._stop_requested = True

    def pause(self, timeout: float | None = None) -> None:
        """Ask every container to pause (no new message; in-flight ones complete; each commits) and wait
        until every container still running confirmed it (JobTimeoutError naming the others after
        ``timeout`` s; the pause stays asked). Each learns it on its next report (within
        ``cluster-manager.container.status.interval.ms``). Safe from any thread but the coordinator's HTTP
        threads; idempotent."""
        self._control.pause()
        self._control.wait_paused(timeout)

    def request_pause(self) -> None:
        """Ask every container to pause and return at once (:meth:`pause` also waits for them)."""
        self._control.pause()

    def resume(self) -> None:
        """Ask every container to dispatch again (returns at once; a no-op when not paused)."""
        self._control.resume()

    def set(
        self, changes: Mapping[str, Any] | None = None, *, timeout: float = SET_TIMEOUT_S, **keywords: Any
    ) -> dict[str, str]:
        """Ask every container to change live knobs (the keys ``SamzaContainer.set`` takes; any other key
        is a ConfigError listing the live keys, raised here) and wait up to ``timeout`` s for the running
        containers to apply it; returns every knob asked so far. A change a container refuses (e.g. a
        priority for a job without priority tiers) is withdrawn and a ConfigError names the container and
        why; a container that has not answered within ``timeout`` applies the change when it does."""
        before = dict(self._control.state.knobs)
        asked = self._control.set(changes, keywords)
        seq = self._control.state.seq
        self._control.wait_applied(seq, timeout)
        refused = self._refusals(seq)
        if refused:
            changed = {key: before.get(key) for key, value in asked.items() if before.get(key) != value}
            self._control.withdraw(changed)
            reasons = "; ".join(f"container {cid}: {why}" for cid, why in sorted(refused.items()))
            raise ConfigError(
                f"the change was refused and withdrawn: {reasons}", key=next(iter(changed), None)
            )
        return asked

    def _refusals(self, seq: int) -> dict[str, str]:
        """Container id -> why it refused control state ``seq`` (the containers that applied it and said
        no)."""
        with self._lock:
            reports = self._status.reports if self._status is not None else {}
            return {
                cid: report.refused
                for cid, report in reports.items()
                if report.refused and report.control >= seq and not report.final
            }

    def control_state(self) -> ControlState:
        """What the containers are asked to be (paused, knobs) and the change's sequence number."""
        return self._control.state

    def paused_containers(self) -> list[str]:
        """Containers whose last report says they are paused with the current control state applied."""
        seq = self._control.state.seq
        return sorted(cid for cid, (done, paused) in self._confirmations().items() if done >= seq and paused)

    def _confirmations(self) -> dict[str, tuple[int, bool]]:
        """Container id -> (control seq applied, paused) of every container not known to have ended
        ((0, False) for one that has not reported)."""
        with self._lock:
            if self._status is None or self._model is None:
                return {}
            reports = self._status.reports
            result: dict[str, tuple[int, bool]] = {}
            for cid in self._model.containers:
                report = reports.get(cid)
                if report is None:
                    result[cid] = (0, False)
                elif not report.final:
                    result[cid] = (report.control, report.paused)
            return result

    def locality(self) -> dict[str, str]:
        """Container id -> the host it last reported (from the coordinator stream before that)."""
        with self._lock:
            return dict(self._hosts)

    def report(self, report: ContainerReport) -> bool:
        """Take a container's report (any thread); a new host is written to the coordinator stream. A
        report from a new process starts a new attempt (the previous attempt's last count moves to the
        status' ``earlier``); a final report ends its process, whose later non-final reports (in flight
        when it was sent) are ignored, as are reports of a process a newer attempt replaced (see
        :meth:`JobStatus.take`). True when the container should stop (see :meth:`request_stop`), and for
        any later attempt of a container whose work was completed (a retry Spark started because the
        executor of an attempt that had finished was lost: it has nothing to do)."""
        cid = report.container_id
        with self._lock:
            if self._status is None:
                raise SamzaError("the job coordinator has not started")
            taken = self._status.take(report)
            if taken and report.outcome is RunOutcome.FINISHED and cid not in self._completed:
                self._completed[cid] = report.pid
            redundant = cid in self._completed and self._completed[cid] != report.pid
            moved = taken and report.host and self._hosts.get(report.container_id) != report.host
            if moved:
                self._hosts[report.container_id] = report.host
        if taken:
            self._control.reported()
        if moved and self._loop is not None:
            message = CoordinatorStreamMessage.set_container_host(report.container_id, report.host, SOURCE)
            future = asyncio.run_coroutine_threadsafe(self._store.send([message]), self._loop)
            future.add_done_callback(_log_failure)
            with self._lock:
                self._writes = [f for f in self._writes if not f.done()] + [future]
        if redundant and not report.final:
            log.info("container %s had completed its work: its new attempt (pid %s) stops", cid, report.pid)
        return self._stop_requested or redundant

    async def stop(self) -> None:
        """Stop the feeds it started, stop serving, finish pending writes, close the coordinator stream
        (idempotent)."""
        feeding, self._feeding = self._feeding, []
        feed_error: Exception | None = None
        if feeding:
            try:
                await stop_feeding(self._admins, feeding)
            except Exception as exc:  # raised once the rest has stopped
                feed_error = exc
        for task in (self._catch_up, self._renewing):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._catch_up = self._renewing = None
        if self._server is not None:
            self._server.stop()
        if self._queries is not None:
            self._queries.close()
        with self._lock:
            writes, self._writes = self._writes, []
        if writes:
            await asyncio.wait([asyncio.wrap_future(f) for f in writes])
        if self._started_store:
            self._started_store = False
            lease, self._lease = self._lease, None
            try:
                if lease is not None:
                    await lease.release()
            except SamzaError as exc:  # the claim then ends with this process or its lease
                log.warning("job coordinator: releasing the driver's claim failed: %s", exc)
            finally:
                await self._store.stop()
        if feed_error is not None:
            raise feed_error

    async def _keep_catching_up(self, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            try:
                await self._store.catch_up()
            except SamzaError as exc:
                log.warning("job coordinator: catching up with the coordinator stream failed: %s", exc)


class _Endpoints:
    """What the HTTP service serves, read from the coordinator."""

    def __init__(self, coordinator: JobCoordinator) -> None:
        self._coordinator = coordinator

    def job_model_json(self) -> bytes:
        return self._coordinator._model_json

    def locality(self) -> Mapping[str, str]:
        return self._coordinator.locality()

    def status(self) -> Mapping[str, Any]:
        return self._coordinator.job_status().to_dict()

    def container_ids(self) -> Collection[str]:
        return self._coordinator.job_model.containers.keys()

    def report(self, report: ContainerReport) -> bool:
        return self._coordinator.report(report)

    def fenced(self) -> str | None:
        return self._coordinator.fenced

    def control(self) -> Mapping[str, Any]:
        return self._coordinator.control_state().to_dict()

    def command(self, command: Mapping[str, Any]) -> Mapping[str, Any]:
        return run_command(self._coordinator, command)

    def store_key(self, store: str, key: str, committed: bool) -> Mapping[str, Any]:
        return self._coordinator.queries.get_text(store, key, committed=committed).to_dict()

    def store_sql(self, store: str, sql: str) -> Mapping[str, Any]:
        result = self._coordinator.queries.sql(store, sql)
        return {"columns": list(result.columns), "rows": [[plain(v) for v in row] for row in result.rows]}


def _log_failure(future: concurrent.futures.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("job coordinator: writing a container's host failed: %s", future.exception())


__all__ = ["JobCoordinator"]
