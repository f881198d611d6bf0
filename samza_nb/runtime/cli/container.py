"""``samza-nb container``: run one container of a job against its job coordinator.

The coordinator's URL and the container's id come from ``SAMZA_COORDINATOR_URL`` and ``SAMZA_CONTAINER_ID``
(or ``--coordinator-url`` / ``--container-id``). The container fetches the job model (retrying while the
coordinator starts), runs exactly its tasks (the task class from the model's ``task.class``, or the
operator task of the planned application its ``app.class`` names), reports its host, state and progress
to the coordinator every ``cluster-manager.container.status.interval.ms``, and stops gracefully (every
task commits) when the coordinator's answer asks it to, or on SIGTERM or SIGINT; a second signal stops it
without committing. The answer also carries the job's control state (pause, live knobs: see
``samza-nb control``): the container applies a change and reports again at once.
Exit status: 0 done or stopped, 1 failed, 2 bad config or usage, 3 failed by a bad message (a message an
output cannot store: runners do not restart it), 4 fenced (a newer driver took the job over: it stopped at
once without committing), 128 + signal when forced.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from samza_nb import crash_points
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.container.container import SamzaContainer
from samza_nb.container.queries.loop_server import LiveQueryServer
from samza_nb.container.queries.server import QueryServer
from samza_nb.coordinator.client import (
    ID_ENV,
    JOB_ID_ENV,
    JOB_NAME_ENV,
    URL_ENV,
    CoordinatorUnreachable,
    exchange_report,
    fetch_job_model,
    send_report,
)
from samza_nb.coordinator.control import ControlState
from samza_nb.coordinator.http_server import is_loopback
from samza_nb.coordinator.status import ContainerReport
from samza_nb.errors import ConfigError, SamzaError, failed_message
from samza_nb.observe.states import ContainerState
from samza_nb.operators.impl.time_probe import TimeProbe
from samza_nb.runtime.applications import load_task_factory
from samza_nb.runtime.console import (
    EXIT_FENCED,
    EXIT_OK,
    install_signal_handlers,
    report_error,
    setup_logging,
)

log = logging.getLogger(__name__)

FETCH_TIMEOUT_KEY = "cluster-manager.container.coordinator.timeout.ms"
FETCH_TIMEOUT_S = 30.0
"""How long to wait for the coordinator's job model (before the job's config, which has the key, is known)."""


def add_container_command(commands: Any) -> None:
    """``samza-nb container``."""
    parser = commands.add_parser(
        "container",
        help="run one container of a job from its job coordinator",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--coordinator-url", default=os.environ.get(URL_ENV), help=f"default: ${URL_ENV}")
    parser.add_argument("--container-id", default=os.environ.get(ID_ENV), help=f"default: ${ID_ENV}")
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=FETCH_TIMEOUT_S,
        metavar="S",
        help=f"how long to wait for the coordinator's job model (default {FETCH_TIMEOUT_S:g} s)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log more; show tracebacks of errors")
    parser.set_defaults(handler=container_command)


def container_command(args: argparse.Namespace) -> int:
    """Run the container; one line on stderr naming the container when it fails."""
    setup_logging(args.verbose)
    if not args.coordinator_url or not args.container_id:
        missing = URL_ENV if not args.coordinator_url else ID_ENV
        flag = "--coordinator-url" if not args.coordinator_url else "--container-id"
        return report_error(ConfigError(f"no {missing} in the environment and no {flag}"), args.verbose)
    who = f"container {args.container_id}: "
    try:
        process = ContainerProcess(args.coordinator_url, args.container_id, args.connect_timeout)
        process.expected_job = (os.environ.get(JOB_NAME_ENV) or None, os.environ.get(JOB_ID_ENV) or None)
        return asyncio.run(process.run())
    except Exception as exc:
        return report_error(exc, args.verbose, who)


class ContainerProcess:
    """One container run against the coordinator at ``url``, with its status reporter and signals."""

    def __init__(self, url: str, container_id: str, connect_timeout_s: float = FETCH_TIMEOUT_S) -> None:
        self.url = url
        self.connect_timeout_s = connect_timeout_s
        self.container_id = container_id
        self.host = socket.gethostname()
        self.container: SamzaContainer | None = None
        self.signals = 0
        self.forced: int | None = None
        self._job: asyncio.Future[None] | None = None
        self._lost: str | None = None
        self._unknown = False
        self._asked = False  # the coordinator asked it to stop
        self.expected_job: tuple[str | None, str | None] = (None, None)
        """(job.name, job.id) this container belongs to; a job model of another job is refused."""
        self._control_seq = 0  # the coordinator's control state applied last
        self._asked_knobs: Mapping[str, str] = {}
        self._knobs: dict[str, str] = {}
        self._refused: str | None = None  # why the last control state was not applied
        self._paused = False  # a pause asked by the coordinator completed (and no resume since)
        self._pausing: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()  # report now (a control change was applied)
        self._queries: QueryServices | None = None  # its stores' query service (reported while it runs)

    async def run(self) -> int:
        """Fetch the model, run the container to its end; the exit status (raises what failed it)."""
        model = await asyncio.to_thread(fetch_job_model, self.url, self.connect_timeout_s)
        if crash_points.ARMED:
            crash_points.reached("container.model-fetched")
        self._unknown = self.container_id not in model.containers  # the container's run says so
        try:
            config = Config(model.config).validate()
            self._refuse_foreign_job(config)
            factory = load_task_factory(config)
        except SamzaError as exc:
            await self._final_report(exc)  # the runner names the container with this error
            raise
        container = SamzaContainer(config, factory, container_id=self.container_id, job_model=model)
        self.container = container
        queries = self._queries = await serve_queries(container, self.url)
        loop = asyncio.get_running_loop()
        restore = install_signal_handlers(loop, self._on_signal)
        job = self._job = asyncio.ensure_future(container.run())
        interval = config.value("cluster-manager.container.status.interval.ms") / 1000
        patience = config.value(FETCH_TIMEOUT_KEY) / 1000
        reporter = asyncio.create_task(self._report_periodically(interval, patience))
        error: BaseException | None = None
        try:
            await job
        except asyncio.CancelledError:
            if self.forced is None:
                raise
        except Exception as exc:
            error = exc
        finally:
            restore()
            queries.stop()  # (the final report carries no query URL)
            for task in (reporter, self._pausing):
                if task is not None:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        if self.forced is not None:
            return self.forced
        if error is None and self._lost is not None:
            error = SamzaError(self._lost)
        await self._final_report(error)
        if error is not None:
            raise error
        return EXIT_OK

    def _refuse_foreign_job(self, config: Config) -> None:
        """A SamzaError naming both jobs when the served model's job.name or job.id is not this one's."""
        name, job_id = self.expected_job
        served = (config.job_name(), config.job_id())
        if (name is not None and served[0] != name) or (job_id is not None and served[1] != job_id):
            raise SamzaError(
                f"the job model at {self.url} is of job {served[0]!r} (id {served[1]!r}), not of this "
                f"container's job {name!r} (id {job_id!r}); refusing to run it"
            )

    def _on_signal(self, signum: int) -> None:
        self.signals += 1
        assert self.container is not None and self._job is not None
        if self.signals == 1:
            log.info("%s: stopping gracefully (commits)", signal.Signals(signum).name)
            self.container.shutdown()
        elif self._job.cancel():
            self.forced = 128 + signum

    def _completed(self) -> bool:
        """It ended by itself: no signal, no stop asked by the coordinator, the coordinator never lost."""
        return self.signals == 0 and not self._asked and self._lost is None and self.forced is None

    def _report(self, state: ContainerState | None = None, error: str | None = None) -> ContainerReport:
        if self.container is None:  # it failed before its container existed
            return ContainerReport(
                self.container_id, self.host, state or ContainerState.FAILED, 0, (), error, os.getpid()
            )
        status = self.container.status()
        tasks = tuple(
            {
                "name": task.name,
                "processed": task.processed,
                "in-flight": task.in_flight,
                "peak-in-flight": task.peak_in_flight,
                "end-of-stream": task.end_of_stream,
                "done": task.done,
                "partitions": [
                    {
                        "ssp": str(p.ssp),
                        "processed-offset": p.processed_offset,
                        "committed-offset": p.committed_offset,
                        "ended": p.ended,
                        "processed": p.processed,
                        "starting-offset": p.starting_offset,
                        "resets": [
                            {"from": r.from_offset, "to": r.to_offset, "line": r.describe()} for r in p.resets
                        ],
                    }
                    for p in task.partitions
                ],
            }
            for task in status.tasks
        )
        live = (ContainerState.STARTING, ContainerState.RUNNING, ContainerState.STOPPING)
        reported = state or (status.state if status.state in live else ContainerState.RUNNING)
        completed = reported is ContainerState.STOPPED and self._completed()
        queries = self._queries if state is None and self._queries is not None else None
        return ContainerReport(
            self.container_id,
            self.host,
            reported,
            status.processed,
            tasks,
            error,
            os.getpid(),
            completed,
            self._control_seq,
            self._paused,
            self._knobs,
            self._refused,
            queries.files.url if queries is not None else None,
            queries.files.token if queries is not None else None,
            live_url=queries.live.url if queries is not None else None,
        )

    async def _report_periodically(self, interval_s: float, patience_s: float) -> None:
        """Send a report every ``interval_s``; when the coordinator answers "stop", stop gracefully (commits);
        when no report got through for ``patience_s``, the coordinator is gone: stop gracefully and fail.
        A new control state in the answer is applied (:meth:`_steer`), and reported at once."""
        last_ok = time.monotonic()
        while True:
            try:
                answer = await asyncio.to_thread(
                    exchange_report, self.url, self._report(), min(patience_s, 10.0)
                )
                stop = answer.stop
                last_ok = time.monotonic()
                if answer.fenced is not None:
                    self._fence(answer.fenced)
                    return
                if answer.control is not None and answer.control.seq != self._control_seq and not stop:
                    self._steer(answer.control)
                if stop and not self._asked:
                    self._asked = True
                    log.info("container %s: the job coordinator asked it to stop", self.container_id)
                    assert self.container is not None
                    self.container.shutdown()
            except CoordinatorUnreachable as exc:
                if time.monotonic() - last_ok > patience_s and self._lost is None:
                    self._lost = (
                        f"the job coordinator at {self.url} was unreachable for {patience_s:g} s: {exc}"
                    )
                    log.error("%s; stopping", self._lost)
                    assert self.container is not None
                    self.container.shutdown()
            with contextlib.suppress(TimeoutError):  # the next report is due, or a change was applied
                await asyncio.wait_for(self._wake.wait(), interval_s)
            self._wake.clear()

    def _fence(self, why: str) -> None:
        """A newer driver took the job over: stop at once, without committing (exit status 4)."""
        log.error("container %s stops without committing: %s", self.container_id, why)
        if self._job is not None and self._job.cancel():
            self.forced = EXIT_FENCED

    def _steer(self, control: ControlState) -> None:
        """Apply the coordinator's control state (on the loop's thread): the knobs that changed, then pause
        (in the background: the report saying paused goes once the container is quiet) or resume."""
        container = self.container
        assert container is not None
        changes = {k: v for k, v in control.knobs.items() if self._asked_knobs.get(k) != v}
        self._asked_knobs = dict(control.knobs)
        self._control_seq = control.seq
        self._wake.set()
        self._refused = None
        try:
            if changes:
                self._knobs = container.steering.set(changes)
            if control.paused and self._pausing is None and not self._paused:
                self._pausing = asyncio.create_task(self._pause(container))
            elif not control.paused:
                if self._pausing is not None:
                    self._pausing.cancel()
                    self._pausing = None
                self._paused = False
                container.steering.resume()
        except SamzaError as exc:  # a knob this job cannot take live, or the container is ending
            self._refused = " ".join(str(exc).split())  # the report tells the coordinator, whose set() raises
            log.warning("container %s: the control state was not applied: %s", self.container_id, exc)

    async def _pause(self, container: SamzaContainer) -> None:
        try:
            await container.steering.pause_async()
        except SamzaError as exc:  # it ended meanwhile
            log.warning("container %s: pause failed: %s", self.container_id, exc)
        else:
            self._paused = True
            log.info("container %s: paused (the job coordinator asked)", self.container_id)
        finally:
            if self._pausing is asyncio.current_task():
                self._pausing = None
            self._wake.set()

    async def _final_report(self, error: BaseException | None) -> None:
        """The last report (stopped or failed, with the error); the coordinator may be gone: best effort."""
        if self._unknown:
            return
        text = None if error is None else " ".join(str(error).split()) or type(error).__name__
        report = self._report(ContainerState.FAILED if error is not None else ContainerState.STOPPED, text)
        failed = failed_message(error)
        ssp = failed.ssp if failed is not None else None
        if failed is not None and failed.offset is not None and isinstance(ssp, SystemStreamPartition):
            where = (ssp.system, ssp.stream, ssp.partition, failed.offset)  # the message it failed on
            report = dataclasses.replace(report, failed_at=where)
        try:
            await asyncio.to_thread(send_report, self.url, report, 5.0)
        except CoordinatorUnreachable as exc:
            log.warning("container %s: the final status report failed: %s", self.container_id, exc)


QUERY_SWITCH_INTERVAL_S = 0.001
"""A container process hands the GIL to a waiting thread after this long (CPython's default, 5 ms, would add
up to 5 ms at each hand-over of what its state-file service reads on its threads: committed values and
rows; only a thread that waits forces a switch, so a container nobody queries loses nothing)."""


class QueryServices:
    """A container process's two query services, on one token: its state files' (threads: answers while
    the loop is busy in a long step) and its live values' and event time's (on its loop)."""

    def __init__(self, files: QueryServer, live: LiveQueryServer) -> None:
        self.files = files
        self.live = live

    def stop(self) -> None:
        """Stop both (idempotent)."""
        self.live.stop()
        self.files.stop()


async def serve_queries(container: SamzaContainer, coordinator_url: str) -> QueryServices:
    """The container's query services, bound where its coordinator can reach them: the loopback address when
    the coordinator is on it, else every address (the URLs name the one that routes to the coordinator)."""
    sys.setswitchinterval(min(sys.getswitchinterval(), QUERY_SWITCH_INTERVAL_S))
    host = urlsplit(coordinator_url).hostname or "127.0.0.1"
    bind, reach = "127.0.0.1", None
    if not is_loopback(host):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # (no packet is sent)
            probe.connect((host, 9))
            bind, reach = "0.0.0.0", str(probe.getsockname()[0])
    files = QueryServer(container, bind, reach)
    try:
        live = await LiveQueryServer.open(container, files.token, bind, reach, TimeProbe(container))
    except BaseException:
        files.stop()
        raise
    return QueryServices(files, live)


__all__ = [
    "ID_ENV",
    "JOB_ID_ENV",
    "JOB_NAME_ENV",
    "URL_ENV",
    "ContainerProcess",
    "add_container_command",
    "container_command",
]
