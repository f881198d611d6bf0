"""SparkJobRunner: a job's containers as the tasks of one background Spark job (docs/architecture.md §10).

The job coordinator runs on the driver, on an event loop of its own thread; the
``job.container.count`` containers are the tasks of ONE plain Spark job (no barrier) submitted from another
thread under a job group with ``interruptOnCancel``. Each task runs its container as a child process of
its Python worker (:mod:`.task`) against the coordinator's URL; a container that fails fails its task,
which Spark retries up to ``spark.task.maxFailures`` (not one a bad message failed: the job fails at once,
see :mod:`.task`): the new attempt resumes from the container's
checkpoints and restores its stores from their changelogs (an ordinary container start), and the
coordinator takes its reports as the same container's. When the retries run out the job fails with that
container's error (:attr:`SparkJobRunner.failure`).

Stop is cooperative: the coordinator answers every container's next report with "stop", each commits and
exits, its task ends; the job group is cancelled once the job ended or when the containers did not stop
within ``cluster-manager.container.coordinator.timeout.ms`` (Spark then kills their workers, and a
container whose worker dies gets SIGTERM: it commits and exits). The coordinator keeps serving until every
container it heard from reported its end or its process is gone, so nothing keeps running a container after
the runner finished.

Pause, resume and live knobs go the same way (:class:`~samza_nb.runtime.steering.CoordinatorSteering`):
every container learns them on its next report.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.errors import ConfigError, JobTimeoutError, SamzaError
from samza_nb.runtime.applications import JobProgram, what_job_runs
from samza_nb.runtime.config_check import check_job_config
from samza_nb.runtime.local import read_checkpoints
from samza_nb.runtime.spark.cluster import (
    container_url,
    coordinator_reach,
    local_workers_run_this_python,
    task_attempts,
    task_slots,
)
from samza_nb.runtime.spark.container_ends import TIMEOUT_KEY, containers_gone
from samza_nb.runtime.spark.failures import bad_message, job_failure, retry_refusal
from samza_nb.runtime.spark.fed_streams import failed_feed, fed_streams
from samza_nb.runtime.spark.placement import check_cluster_placement, with_absolute_base_dir
from samza_nb.runtime.spark.probes import SharedDirProbe
from samza_nb.runtime.spark.ship import ship_job_code
from samza_nb.runtime.spark.slot_wait import SlotWait, wait_for_slots_telling
from samza_nb.runtime.spark.task import FAILED_MARK, container_task
from samza_nb.runtime.spark.warmup import PythonWarmup
from samza_nb.runtime.steering import CoordinatorSteering
from samza_nb.systems.spark.session import import_pyspark_sql, spark_session

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.coordinator.status import JobStatus

log = logging.getLogger(__name__)

COUNT_KEY = "job.container.count"
WATCH_INTERVAL_S = 0.05
"""How often the driver's loop looks at the Spark job and a stop request."""


class SparkJobRunner(CoordinatorSteering):
    """The job coordinator on the driver; ``job.container.count`` containers as the tasks of one Spark job
    (see the module).

    ``start()`` starts the coordinator and submits the job, and returns (raising what kept the job from
    starting: a ConfigError naming ``job.container.count`` when Spark has fewer task slots than containers);
    ``run(timeout=None)`` starts it if needed and blocks until the job is done, stopped or failed (after
    ``timeout`` seconds it stops it gracefully and raises JobTimeoutError; a failed job raises its error);
    ``stop()`` asks for the cooperative stop from any thread and returns (``cancel()`` cancels the Spark
    job at once); ``join()`` waits for the end.
    ``processed`` counts every container's messages (every attempt's); ``status()`` is every container's last
    report; ``failure`` is the one-line error of a failed job; ``stopped`` says the job ended on a stop
    request, ``cancelled`` that its Spark job was cancelled before its containers ended. ``spark``: the
    SparkSession (default: the active one, else one built from ``spark.master`` / ``spark.conf.*``);
    ``python_path``: directories the containers import from before the driver's ``sys.path`` (e.g. a
    notebook's task module); ``jvm_log``: a file for the output of the JVM of a session the runner starts
    (Spark's log, the containers' standard error; default: the terminal); ``program``: what the job runs,
    when the caller decided it already (default: decided from the config when the runner starts)."""

    def __init__(
        self,
        config: Config,
        spark: Any = None,
        *,
        python_path: Sequence[str] = (),
        jvm_log: str | os.PathLike[str] | None = None,
        program: JobProgram | None = None,
    ) -> None:
        check_job_config(config, python_path=python_path)  # misspelt key, class or serde: before a start
        self.config = with_absolute_base_dir(config.validate())
        self._program = program
        self.spark = spark
        self.python_path = tuple(python_path)
        self.jvm_log = jvm_log
        self.containers = self.config.get_int(COUNT_KEY, 1)
        self.fed = fed_streams(self.config)
        """(system, stream) of each streaming DataFrame this job's Spark systems feed from the driver."""
        self.coordinator: JobCoordinator | None = None
        self.failure: str | None = None
        self.failure_kind: type[SamzaError] = SamzaError
        self.stopped = False
        self.group = f"samza-nb-{self.config.job_name()}-{uuid.uuid4().hex[:8]}"
        self._thread: threading.Thread | None = None
        self._stop_requested = threading.Event()
        self._finished = threading.Event()
        self.cancelled = False
        self._context: Any = None
        self._shipped: list[str] = []
        """The archives of the job's code shipped to the executors (their names)."""
        self._probe: SharedDirProbe | None = None
        self.waiting: SlotWait | None = None
        """What the job waits for while Spark has fewer task slots than it needs (None otherwise)."""
        self.on_wait: Callable[[SlotWait | None], None] | None = None
        """Called (from the thread that starts the runner) when :attr:`waiting` changes."""

    # -- what the CLI and the notebook read -------------------------------------------------------------
    @property
    def name(self) -> str:
        """The job's name (``job.name``)."""
        return self.config.job_name()

    @property
    def job_model(self) -> JobModel | None:
        """The coordinator's job model once it started."""
        return self.coordinator.job_model if self.coordinator is not None else None

    @property
    def slots_needed(self) -> int:
        """Task slots the job occupies: one per container, and one more for the micro-batches of the
        streaming DataFrames it feeds (their ``foreachBatch`` jobs never run while every slot is taken)."""
        return self.containers + (1 if self.fed else 0)

    @property
    def processed(self) -> int:
        """Messages processed by every container (every attempt), as last reported to the coordinator."""
        return self.coordinator.job_status().processed if self.coordinator is not None else 0

    @property
    def done(self) -> bool:
        """True once the job ended and the coordinator stopped."""
        return self._finished.is_set()

    def status(self) -> JobStatus | None:
        """Every container's last report (None before the coordinator started)."""
        return self.coordinator.job_status() if self.coordinator is not None else None

    async def read_checkpoints(self) -> dict[str, dict[SystemStreamPartition, str]]:
        """The last checkpoint of each task (``{}`` before the job model was known)."""
        model = self.job_model
        if model is None or self.coordinator is None:
            return {}
        return await read_checkpoints(self.coordinator.config, model.tasks)

    def _steered(self) -> list[JobCoordinator]:
        if self.coordinator is None:
            raise SamzaError(f"the Spark runner of job {self.name} has not started: nothing to steer")
        return [self.coordinator]

    # -- lifecycle --------------------------------------------------------------------------------------
    def start(self) -> None:
        """Check the slots, start the coordinator (its errors propagate) and submit the containers' job."""
        if self._thread is not None:
            raise SamzaError(f"the Spark runner of job {self.name} was already started")
        configured_master = (self.config.get_str("spark.master") or "").strip()
        if self.spark is None and configured_master:
            check_cluster_placement(self.config, configured_master)  # before a session starts
        context = self._context = self._spark_context()
        check_cluster_placement(self.config, str(context.master))
        shipped = ship_job_code(context, self.config, [*self.python_path, os.getcwd(), *sys.path])
        self._shipped = [shipped.name] if shipped is not None else []
        timeout_s = self.config.value(TIMEOUT_KEY) / 1000
        slots, waited = wait_for_slots_telling(context, self.slots_needed, timeout_s, self._waiting)
        if task_attempts(context) < 2:
            log.warning(
                "job %s: Spark (master %s) runs each task once, so a failed container is not retried: use "
                "local[N,F] (F attempts) or spark.task.maxFailures",
                self.name,
                context.master,
            )
        if slots < self.slots_needed:
            feeds = (
                f", plus one slot for the micro-batches feeding {', '.join(f'{s}.{t}' for s, t in self.fed)}"
                if self.fed
                else ""
            )
            raise ConfigError(
                f"{COUNT_KEY} = {self.containers}: the Spark runner runs every container at once as a Spark "
                f"task{feeds}, and Spark has {slots} task slot{'s' if slots != 1 else ''} "
                f"(master {context.master}): set {COUNT_KEY} <= {slots - len(self.fed[:1])} or give Spark "
                f"more cores{f' (after {timeout_s:g} s {waited.line})' if waited is not None else ''}",
                key=COUNT_KEY,
            )
        probe = self._probe = SharedDirProbe(self.config, str(context.master))
        try:
            probe.write()
            probe.check_executors(context, slots)  # before any input is written
        except BaseException:
            probe.remove()
            raise
        warm = min(slots, 4 * self.slots_needed)  # tasks enough to reach every executor a container may get
        PythonWarmup(context, warm, self.group).start()  # while the coordinator starts
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=self._main, args=(context, ready), name=f"samza-spark-driver-{self.name}", daemon=True
        )
        self._thread.start()
        ready.result()

    def _waiting(self, wait: SlotWait | None) -> None:
        self.waiting = wait
        if self.on_wait is not None:
            self.on_wait(wait)

    def stop(self) -> None:
        """Ask every container to stop gracefully (each commits); returns at once, safe from any thread,
        also before the start."""
        self._stop_requested.set()
        coordinator = self.coordinator
        if coordinator is not None:
            coordinator.request_stop()

    def cancel(self) -> None:
        """Stop at once: cancel the containers' Spark job (Spark kills their workers; each container then
        gets SIGTERM and commits what it can). Safe from any thread."""
        self.stop()
        self.cancelled = True
        if self._context is not None:
            self._cancel(self._context)

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the job ended and the coordinator stopped; False when ``timeout`` passed first."""
        return self._finished.wait(timeout)

    def run(self, timeout: float | None = None) -> None:
        """Run to the end (see the class)."""
        if self._thread is None:
            self.start()
        timed_out = False
        try:
            if not self._finished.wait(timeout):
                timed_out = True
                self.stop()
                self._finished.wait()
        except KeyboardInterrupt:
            self.stop()
            self._finished.wait()
            raise
        if self.failure is not None:
            raise self.failure_kind(self.failure)
        if timed_out:
            raise JobTimeoutError(
                f"job did not finish within {timeout:g} s; stopped it after {self.processed} messages"
            )

    # -- the driver's thread ----------------------------------------------------------------------------
    def _spark_context(self) -> Any:
        spark = self.spark
        if spark is None:
            if import_pyspark_sql().SparkSession.getActiveSession() is None:
                local_workers_run_this_python(self.config)
            spark = self.spark = spark_session(self.config, self.slots_needed, jvm_log=self.jvm_log)
        try:
            return spark.sparkContext
        except Exception as exc:
            raise ConfigError(
                f"the Spark runner needs a SparkSession with a SparkContext (a Spark Connect session has "
                f"none): {type(exc).__name__}: {exc}",
                key="spark.master",
            ) from None

    def _main(self, context: Any, ready: concurrent.futures.Future[None]) -> None:
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._lifecycle(context, ready))
        except BaseException as exc:  # never lose what ended the driver's thread
            if not ready.done():
                ready.set_exception(exc)
            elif self.failure is None:
                self.failure = f"the Spark runner's driver thread failed: {type(exc).__name__}: {exc}"
            log.exception("the Spark runner of job %s failed", self.name)
        finally:
            loop.close()
            if self._probe is not None:
                self._probe.remove()
            self._finished.set()

    async def _lifecycle(self, context: Any, ready: concurrent.futures.Future[None]) -> None:
        config = self.config
        try:
            program = self._program if self._program is not None else what_job_runs(config)
            if program.needs_planning:
                prepared = await program.plan(config)
                if len(prepared.jobs) != 1:
                    raise ConfigError(
                        f"app.split.jobs: the application runs as {len(prepared.jobs)} jobs, and the Spark "
                        "runner runs one: run them with samza-nb run, or one of them with app.stage = N",
                        key="app.split.jobs",
                    )
                config = prepared.jobs[0]
            config, token = coordinator_reach(config, context)
            coordinator = JobCoordinator(config, token=token)
        except BaseException as exc:
            ready.set_exception(exc)
            return
        try:
            await coordinator.start()
        except BaseException as exc:
            await coordinator.stop()
            ready.set_exception(exc)
            return
        self.coordinator = coordinator
        if self._stop_requested.is_set():
            coordinator.request_stop()
        ready.set_result(None)
        try:
            await self._watch(context, coordinator)
        finally:
            await containers_gone(coordinator, self.name, WATCH_INTERVAL_S)
            await coordinator.stop()

    async def _watch(self, context: Any, coordinator: JobCoordinator) -> None:
        """Run the Spark job to its end; a stop request stops the containers, then cancels the job group."""
        job = asyncio.ensure_future(asyncio.to_thread(self._run_job, context, coordinator))
        patience = coordinator.config.value(TIMEOUT_KEY) / 1000
        asked: float | None = None
        while not job.done():
            await asyncio.wait({job}, timeout=WATCH_INTERVAL_S)
            failed = failed_feed(self.fed) or bad_message(coordinator) or coordinator.fenced
            if failed is not None and self.failure is None:
                self.failure = failed  # a feed: containers would wait for rows that never come
                self._stop_requested.set()
            if coordinator.fenced is not None and not self.cancelled:  # its containers stop uncommitted
                self.cancelled = True
                await asyncio.to_thread(self._cancel, context)
            if self._stop_requested.is_set() and not job.done():
                if asked is None:
                    asked = time.monotonic()
                    coordinator.request_stop()
                elif not self.cancelled and time.monotonic() - asked > patience:
                    log.warning("containers of %s did not stop within %g s: cancelling", self.name, patience)
                    self.cancelled = True
                    await asyncio.to_thread(self._cancel, context)
        try:
            ended = job.result()
        except Exception as exc:
            self._job_failed(exc)
        else:
            bad = [f"container {cid} {end}" for cid, end in ended if end.startswith(FAILED_MARK)]
            self.failure = self.failure or (bad[0] if bad else None)  # a bad message's container
            self.stopped = self._stop_requested.is_set() and not bad
        finally:
            await asyncio.to_thread(self._cancel, context)  # the job group's end (retries pending, if any)

    def _run_job(self, context: Any, coordinator: JobCoordinator) -> list[tuple[str, str]]:
        """The containers' Spark job: one task per container id (blocks until it ended)."""
        context.setJobGroup(
            self.group, f"samza_nb job {self.name}: {self.containers} containers", interruptOnCancel=True
        )
        ids = sorted(coordinator.job_model.containers, key=lambda cid: (len(cid), cid))
        path = [*self.python_path, os.getcwd(), *(p or os.getcwd() for p in sys.path)]
        url = container_url(coordinator.url, context)
        check = self._probe.check if self._probe is not None else None
        no_retry = retry_refusal(self.config, coordinator.job_model)
        task = container_task(
            url,
            list(dict.fromkeys(path)),
            os.getcwd(),
            token=coordinator.token,
            shipped=self._shipped,
            check=check,
            no_retry=no_retry,
        )
        results: list[tuple[str, str]] = context.parallelize(ids, len(ids)).mapPartitions(task).collect()
        return results

    def _cancel(self, context: Any) -> None:
        try:
            context.cancelJobGroup(self.group)
        except Exception as exc:  # the context may be stopping with the driver
            log.warning("cancelling the Spark job group %s failed: %s", self.group, exc)

    def _job_failed(self, exc: BaseException) -> None:
        """The Spark job ended with ``exc``: a failure, unless it was this runner's cancellation."""
        ended = job_failure(exc, stop_requested=self._stop_requested.is_set(), cancelled=self.cancelled)
        if ended.line is None:
            self.stopped = True
        else:
            self.failure, self.failure_kind = ended.line, ended.kind


__all__ = ["SparkJobRunner", "task_attempts", "task_slots"]
