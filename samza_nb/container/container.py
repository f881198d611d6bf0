"""SamzaContainer: builds a container's tasks, systems and checkpoints from config and runs its loop."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.api.task import TaskContext
from samza_nb.api.task_factory import TaskKind, task_kind
from samza_nb.checkpoint.base import CheckpointManager, load_checkpoint_manager
from samza_nb.chooser.factory import build_chooser
from samza_nb.config.stores import changelog_systems
from samza_nb.container import event_loop
from samza_nb.container.clock import Clock, SystemClock
from samza_nb.container.commit import CommitSequence, committing_producers
from samza_nb.container.consumers import SystemConsumers
from samza_nb.container.inputs import (
    configured_systems,
    head_offsets,
    input_metadata,
    input_streams,
    own_container,
    refuse_shared_partitions,
    start_feeding,
    stop_feeding,
)
from samza_nb.container.loop.collector import OutputBuffer, TaskCollector
from samza_nb.container.loop.loop_state import LoopState
from samza_nb.container.loop.run_loop import RunLoop, RunLoopSettings
from samza_nb.container.loop.task_instance import TaskInstance
from samza_nb.container.offsets import OffsetManager
from samza_nb.container.recording.opening import open_schedule
from samza_nb.container.status import ContainerStatus, task_status
from samza_nb.container.steering.container_steering import ContainerSteering
from samza_nb.container.steering.tap import taps_over
from samza_nb.errors import ContainerStateError, SamzaError
from samza_nb.observe import events as ev
from samza_nb.observe.bus import EventBus
from samza_nb.observe.states import ContainerState
from samza_nb.storage.manager import StorageManager
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    import os

    from samza_nb.api.job_model import JobModel, TaskModel
    from samza_nb.api.metadata import OffsetReset, SSPMetadata
    from samza_nb.config import Config
    from samza_nb.storage.sql.results import QueryResult
    from samza_nb.systems.base import SystemAdmin, SystemFactory, SystemProducer

log = logging.getLogger(__name__)

TaskFactory = Callable[[], Any]


class JobModelPlanner(Protocol):
    """Computes the job model from the config and the inputs' partitions (the coordinator package has one
    for a job run in one process); the container itself never groups partitions into tasks."""

    def __call__(self, config: Config, metadata: Mapping[SystemStreamPartition, SSPMetadata], /) -> JobModel:
        """The job model of the job described by ``config`` whose inputs have these partitions."""
        ...


class SamzaContainer:
    """One container of a job: its tasks run on the current asyncio loop until done, stopped or failed.

    Which tasks it runs comes from a job model: either ``job_model`` (given, e.g. fetched from the job
    coordinator: the container runs exactly the tasks of ``container_id`` in it) or ``planner`` (called
    with the inputs' partitions once they are known). Exactly one of the two is given.

    ``run()`` may be called once. ``shutdown()`` (from any thread) stops it gracefully: in-flight messages
    finish (up to ``task.shutdown.ms``), every task commits, tasks and stores close. Its ``steering``
    (:class:`ContainerSteering`: ``pause``, ``step``, ``peek``, ``resume``, ``set``, ``swap``) steers it.
    """

    def __init__(
        self,
        config: Config,
        task_factory: TaskFactory,
        *,
        container_id: str = "0",
        job_model: JobModel | None = None,
        planner: JobModelPlanner | None = None,
        clock: Clock | None = None,
        bus: EventBus | None = None,
        checkpoint_manager: CheckpointManager | None = None,
        max_messages: int | None = None,
        replay: str | os.PathLike[str] | None = None,
    ) -> None:
        if (job_model is None) == (planner is None):
            raise SamzaError("SamzaContainer needs exactly one of job_model (a JobModel) and planner")
        # Record (job.record.path) or replay (a recording's directory) the schedule: container/recording/.
        self._schedule = open_schedule(config, replay)
        self.config = self._schedule.job_config(config).validate()
        self._given_model = job_model
        self._planner = planner
        self.task_factory = task_factory  # (a swap before the start replaces it)
        self.container_id = container_id
        self.clock: Clock = clock or SystemClock()
        self.bus = bus or EventBus()
        self._checkpoints = checkpoint_manager
        self._max_messages = max_messages
        self.state = ContainerState.NEW
        self.run_loop: RunLoop | None = None
        self.tasks: dict[str, TaskInstance] = {}
        self.job_model: JobModel | None = None
        self.metadata: dict[SystemStreamPartition, SSPMetadata] = {}
        self._stop_requested = False
        self._producers: dict[str, SystemProducer] = {}
        self._committer: CommitSequence | None = None
        self._outputs: OutputBuffer | None = None
        self._consumers: SystemConsumers | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._started_tasks: list[TaskInstance] = []  # initialised, so closed at the end
        self._storage: StorageManager | None = None
        self._admins: dict[str, SystemAdmin] = {}
        self._feeding: list[str] = []  # systems whose feeds this container started (it planned the model)
        self.steering = ContainerSteering(self)

    @property
    def processed(self) -> int:
        """Messages processed so far."""
        return self.run_loop.processed if self.run_loop is not None else 0

    def status(self) -> ContainerStatus:
        """A snapshot of the container and its tasks (call on the container's loop thread)."""
        return ContainerStatus(
            self.state, self.processed, tuple(task_status(ti) for ti in self.tasks.values())
        )

    async def head_offsets(self) -> dict[SystemStreamPartition, str | None]:
        """The newest offset of every input partition, asked of the systems now (for lag)."""
        return await head_offsets(self.metadata, self._admins)

    @property
    def storage(self) -> StorageManager | None:
        """The container's stores (None before they open): what point lookups read (:mod:`.queries`)."""
        return self._storage

    async def query_store(self, store: str, sql: str | None = None) -> QueryResult:
        """DuckDB ``sql`` over the committed contents of ``store`` (the relation ``<store>(key, value,
        partition)``), consistent as of each task's last commit; never blocks the running job. After the
        container stopped, it reads the state files it left."""
        if self._storage is None:
            raise SamzaError("the container has not started its stores yet")
        return await self._storage.query(store, sql)

    def shutdown(self) -> None:
        """Stop gracefully (commits); safe from any thread, also before the loop started."""
        self._stop_requested = True
        if self.run_loop is not None:
            self.run_loop.request_stop()

    async def run(self) -> None:
        """Start, run until done, stop. Raises TaskFailedError (or another SamzaError) on failure."""
        if self.state is not ContainerState.NEW:
            raise ContainerStateError(f"container {self.container_id} was already run (state {self.state})")
        self.state = ContainerState.STARTING
        try:
            loop = await self._assemble()
            self.state = ContainerState.RUNNING
            if self.bus.active:
                self.bus.publish(
                    ev.ContainerStarted(
                        self.clock.now_ms(),
                        {n: tuple(sorted(t.ssps)) for n, t in self.tasks.items()},
                        self.config.value("task.max.concurrency"),
                    )
                )
            if self._stop_requested:
                loop.request_stop()
            await loop.run()
            self.steering.ended(None)
            self.state = ContainerState.STOPPING
        except BaseException as exc:
            self.steering.ended(exc)
            self.state = ContainerState.FAILED
            await self._close(error=exc)
            if self.bus.active:
                self.bus.publish(ev.ContainerStopped(self.clock.now_ms(), self.processed, str(exc)))
            raise
        await self._close(error=None)
        self.state = ContainerState.STOPPED
        if self.bus.active:
            self.bus.publish(ev.ContainerStopped(self.clock.now_ms(), self.processed))

    # -- assembly ---------------------------------------------------------------------------------------
    async def _assemble(self) -> RunLoop:
        """Start what the run loop needs, in order: the systems' admins and the inputs' metadata, the job
        model, checkpoints, producers, stores, the tasks (initialised), consumers; returns the run loop.
        What started is stopped by :meth:`_close`, also when a later step fails."""
        config = self.config
        inputs = input_streams(config)
        systems = sorted(
            {s.system for s in inputs} | set(configured_systems(config)) | changelog_systems(config)
        )
        factories = {name: system_factory(config, name) for name in systems}
        admins = {name: factories[name].get_admin(name, config) for name in systems}
        self._admins = admins
        self.metadata = await input_metadata(inputs, admins)
        model = self._job_model(config)
        self.job_model = model
        if self._planner is not None:  # it planned the model, so it feeds (else the coordinator does)
            await start_feeding(admins, inputs, self._feeding)
        container = own_container(model, self.container_id, self.metadata)
        refuse_shared_partitions(container.tasks)

        checkpoints = self._checkpoints or load_checkpoint_manager(config)
        self._checkpoints = checkpoints
        for name in container.tasks:
            checkpoints.register(name)
        await checkpoints.start()
        offsets = OffsetManager(config, admins, self.metadata, inputs)

        for name in systems:
            producer = factories[name].get_producer(name, config)
            await producer.start()
            self._producers[name] = producer

        pool_size = config.value("job.container.thread.pool.size")
        if pool_size > 0:
            self._executor = event_loop.thread_pool(pool_size, "samza-task")
        settings = RunLoopSettings.from_config(config, self._max_messages)
        await self._start_tasks(container.tasks, offsets, admins, factories, settings)

        chooser = build_chooser(config, self.metadata, inputs, admins, trace=self.bus.per_message)
        chooser = self._schedule.chooser(chooser)
        consumer_objects = {
            name: factories[name].get_consumer(name, config) for name in {s.system for s in inputs}
        }
        consumers = SystemConsumers(
            chooser,
            consumer_objects,
            config.value("task.poll.interval.ms"),
            on_data=self._on_data,
            on_reset=self._on_reset,
        )
        self._consumers = consumers
        self._committer = CommitSequence(
            self._storage, self._outputs, self._producers, checkpoints, self.bus, self.clock
        )
        for ti in self.tasks.values():
            for ssp in sorted(ti.ssps):
                consumers.register(ssp, ti.starting_offsets[ssp])
        loop = RunLoop(
            LoopState(
                list(self.tasks.values()),
                consumers,
                self._commit,
                self.clock,
                self.bus,
                settings,
                self._executor,
                self._outputs,
            )
        )
        self.run_loop = loop
        self._schedule.attach(loop)
        self.steering.bind(loop)
        await consumers.start()
        return loop

    async def _start_tasks(
        self,
        tasks: Mapping[str, TaskModel],
        offsets: OffsetManager,
        admins: Mapping[str, SystemAdmin],
        factories: Mapping[str, SystemFactory],
        settings: RunLoopSettings,
    ) -> None:
        """Restore the stores from the last checkpoints, then build and initialise every task."""
        assert self._checkpoints is not None
        config = self.config
        # A task whose non-bootstrap input is reset starts over: no checkpoint, state or output of before.
        over = frozenset(name for name, model in tasks.items() if offsets.starts_over(model.ssps))
        remote = {
            name: None if name in over else await self._checkpoints.read_last_checkpoint(name)
            for name in tasks
        }
        # Changelogs have a partition per task of the whole job, not only of this container's.
        partitions = self.job_model.max_changelog_partitions if self.job_model is not None else None
        storage = StorageManager(
            config, tasks, self._producers, admins, factories, self.bus, self.clock, partitions
        )
        self._storage = storage
        resume_from = await storage.start(remote, fresh=over)
        for producer in committing_producers(self._producers):
            for name in tasks:
                await producer.recover(name, resume_from.get(name), reset=name in over)
        self._outputs = OutputBuffer(self._producers)
        for name, task_model in tasks.items():
            checkpoint = resume_from.get(name)
            ssps = task_model.ssps
            task = self.task_factory()
            starting = offsets.starting_offsets(ssps, checkpoint)
            last = offsets.last_processed(ssps, checkpoint)  # a replay: the recorded ones instead
            starting, last = self._schedule.starting_point(
                name, starting, last, bool(storage.stores_of(name))
            )
            self.tasks[name] = TaskInstance(
                name,
                task,
                ssps,
                self.collector(name, task_kind(task)),
                starting,
                {ssp: admins[ssp.system].offset_comparator for ssp in ssps},
                last,
                config.value("task.max.concurrency"),
                settings.window_ms > 0,
                inline=self._executor is None,
                async_commit=settings.async_commit,
                before_start=offsets.before_start(starting, checkpoint),
            )
        for ti in self.tasks.values():
            # bus.publish is a no-op while nobody listens, and reaches a dashboard that subscribes later.
            taps = taps_over(storage.stores_of(ti.name))  # a step records there
            context = TaskContext(
                ti.name,
                ti.ssps,
                config,
                stores=taps,
                publish=self.bus.publish,
                now_ms=self.clock.now_ms,
            )
            ti.init(context)
            self.steering.task_started(ti.name, context, taps)
            self._started_tasks.append(ti)

    def collector(self, task_name: str, kind: TaskKind) -> TaskCollector:
        """A new collector for task ``task_name`` running code of ``kind``: tasks on the loop thread (sync
        without a pool, coroutines) send through the output buffer."""
        on_loop = kind is TaskKind.COROUTINE or (self._executor is None and kind is TaskKind.SYNC)
        return TaskCollector(task_name, self._producers, self._outputs if on_loop else None)

    def _on_reset(self, reset: OffsetReset) -> None:
        """A consumer moved a partition whose position did not exist (and logged it): its task reads from
        the new offset (see :meth:`TaskInstance.offsets_reset`), and the status keeps the reset."""
        for ti in self.tasks.values():
            if reset.ssp in ti.ssps:
                ti.offsets_reset(reset)

    def _on_data(self) -> None:
        loop = self.run_loop
        if loop is not None:
            loop.wake()

    def _job_model(self, config: Config) -> JobModel:
        if self._given_model is not None:
            return self._given_model
        assert self._planner is not None
        return self._planner(config, self.metadata)

    async def _commit(self, ti: TaskInstance, offsets: dict[SystemStreamPartition, str]) -> None:
        """Commit ``ti`` at ``offsets`` in the commit order of :class:`CommitSequence`."""
        assert self._committer is not None
        await self._committer.commit(ti.name, offsets)

    async def _close(self, error: BaseException | None) -> None:
        """Stop everything that started, in reverse order; the first cleanup error is raised only when
        the run itself succeeded."""
        consumers, executor, started = self._consumers, self._executor, self._started_tasks
        problems: list[BaseException] = []
        if self._feeding:
            await _attempt(stop_feeding(self._admins, self._feeding), problems)
            self._feeding = []
        if consumers is not None:
            await _attempt(consumers.stop(), problems)
        for ti in started:
            try:
                ti.close()
            except Exception as exc:
                problems.append(SamzaError(f"task {ti.name!r} failed in close(): {exc!r}"))
        if executor is not None:
            executor.shutdown(wait=error is None, cancel_futures=True)
        if self._storage is not None:
            _attempt_now(self._storage.close, problems)
        _attempt_now(self._schedule.close, problems)  # a recording is flushed and closed
        if self._outputs is not None:
            _attempt_now(self._outputs.flush, problems)  # normally empty: the run loop flushed
        for producer in self._producers.values():
            await _attempt(producer.stop(), problems)
        if self._checkpoints is not None and self.state is not ContainerState.NEW:
            await _attempt(self._checkpoints.stop(), problems)
        if problems:
            for problem in problems:
                log.error("while stopping container %s: %s", self.container_id, problem)
            if error is None:
                raise problems[0]


async def _attempt(awaitable: Any, problems: list[BaseException]) -> None:
    try:
        await awaitable
    except Exception as exc:
        problems.append(exc)


def _attempt_now(call: Callable[[], object], problems: list[BaseException]) -> None:
    try:
        call()
    except Exception as exc:
        problems.append(exc)
