"""StreamOperatorTask: the ordinary task that runs an application's operators (Samza's
StreamOperatorTask), and the factory the container is given for an application.

At init the task reads the job's plan (``app.plan``) from its config, builds the operators of the job's
stage for its partitions (:mod:`.impl.graph`), and restores their state and its control bookkeeping.
Each envelope then costs one call of the compiled ``process`` (its partition picks its stream's chains)
and the operators' calls; control messages are looked for only where they can occur (intermediate
partitions, and watermarks on source partitions).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.operators.application import StreamApplicationDescriptor, describe_application, is_application
from samza_nb.operators.impl.base import MissingTimestamp, OpRuntime
from samza_nb.operators.impl.compile import Process, ProcessHooks, stop_catching_up
from samza_nb.operators.impl.control import ControlFlow
from samza_nb.operators.impl.graph import TaskGraph, build_task_graph
from samza_nb.operators.impl.time_view import TaskTime, task_time
from samza_nb.operators.plan import ApplicationPlan

if TYPE_CHECKING:
    from samza_nb.api.config_mapping import ConfigMapping
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.api.task import MessageCollector, TaskContext, TaskCoordinator

IDLE_TIMEOUT_KEY = "task.watermark.idle.timeout.ms"


class ApplicationDescriber:
    """Describes an application for each task (as Samza, every task has its own operator graph: an
    application class is instantiated per task, and the functions ``describe`` makes are the task's own,
    so a function that keeps state never shares it between tasks or threads)."""

    def __init__(self, app: Any) -> None:
        if not is_application(app):
            raise SamzaError(
                f"{app!r} is not a StreamApplication (subclass samza_nb.operators.StreamApplication)"
            )
        self.app = app

    def describe(self, config: ConfigMapping) -> StreamApplicationDescriptor:
        """A new descriptor of the application for ``config``."""
        return describe_application(self.app, config)


class StreamOperatorTask:
    """Runs the operators of an application's stage for one task: a sync task that is also windowable,
    initable, closable, an end-of-stream listener and a partition-end listener."""

    process: Process
    """Runs one envelope through its partition's chains: ``process(envelope, collector, coordinator)``,
    compiled at :meth:`init` (see :meth:`ChainCompiler.process`); before it, a SamzaError."""

    def __init__(self, describer: ApplicationDescriber) -> None:
        self._describer = describer
        self._runtime: OpRuntime | None = None
        self._graph: TaskGraph | None = None
        self._control: ControlFlow | None = None
        self._catching_up = False
        self.context: TaskContext | None = None
        self.process = self._before_init

    # -- lifecycle -------------------------------------------------------------------------------------
    def init(self, context: TaskContext) -> None:
        """Build the stage's operators for this task's partitions, restore their state and the control
        bookkeeping, and compile :attr:`process`."""
        self.context = context
        config = context.config
        plan = ApplicationPlan.from_config(config)
        descriptor = self._describer.describe(config)
        runtime = self._runtime = OpRuntime(context)
        graph = self._graph = build_task_graph(descriptor.graph, plan, context.ssps, runtime)
        control = self._control = ControlFlow(
            runtime, plan, graph, context.ssps, config.get_int(IDLE_TIMEOUT_KEY, -1)
        )
        control.restore()
        # Restored bookkeeping passes through the operators at the first call that can emit.
        self._catching_up = control.pending
        hooks = ProcessHooks(control.on_control, self._unknown, _missing, self._catch_up, control.pending)
        self.process = graph.process(context.ssps, hooks)

    def _catch_up(self) -> None:
        if self._catching_up:
            self._catching_up = False
            stop_catching_up(self.process)
            assert self._control is not None
            self._control.catch_up()

    def _before_init(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        raise SamzaError("StreamOperatorTask was called before init(context)")

    def _unknown(self, envelope: IncomingMessageEnvelope) -> None:
        name = self.context.task_name if self.context is not None else "?"
        raise SamzaError(
            f"task {name!r} got the message at offset {envelope.offset} of {envelope.ssp}, "
            "which is not one of its partitions"
        )

    def close(self) -> None:
        """Close the operators."""
        if self._graph is not None:
            self._graph.close()

    # -- calls from the container ----------------------------------------------------------------------
    def window(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        """The window timer: processing-time windows fire, processing-time join state is purged."""
        self._enter(collector, coordinator)
        runtime, graph = self._runtime, self._graph
        assert runtime is not None and graph is not None
        now = runtime.now()
        for op in graph.timers:
            op.on_timer(now)

    def on_partition_end(
        self, ssp: SystemStreamPartition, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        """``ssp`` ended (a bounded source partition reached its end)."""
        self._enter(collector, coordinator)
        assert self._control is not None
        self._control.partition_ended(ssp)

    def on_end_of_stream(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        """Every partition of the task ended: what is left fires, then the task commits and votes to
        shut down (once)."""
        self._enter(collector, coordinator)
        assert self._control is not None
        self._control.all_partitions_ended()

    def _enter(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        runtime = self._runtime
        if runtime is None:
            raise SamzaError("StreamOperatorTask was called before init(context)")
        runtime.collector = collector
        runtime.coordinator = coordinator
        self._catch_up()

    # -- inspection ------------------------------------------------------------------------------------
    def event_time(self) -> TaskTime | None:
        """What the task knows of event time now (its partitions' and operators' watermarks, its windows'
        late messages and open panes); None before init. Call it on the thread that runs the task."""
        if self.context is None or self._graph is None or self._control is None:
            return None
        return task_time(self.context.task_name, self._graph, self._control)

    @property
    def metrics(self) -> dict[str, Any]:
        """The task's metrics (``["operators"][op_id]``: ``late``, ``panes``, ``purged`` counters)."""
        return self.context.metrics if self.context is not None else {}

    def __repr__(self) -> str:
        name = self.context.task_name if self.context is not None else "not initialised"
        return f"StreamOperatorTask({name})"


def _missing(exc: MissingTimestamp, envelope: IncomingMessageEnvelope) -> None:
    raise SamzaError(f"{exc} (the message at offset {envelope.offset} of {envelope.ssp})") from None


def operator_task_factory(app: Any) -> Callable[[], StreamOperatorTask]:
    """A task factory for the container: each call makes a :class:`StreamOperatorTask` of ``app`` (a
    StreamApplication class or instance), which describes the application once per distinct config."""
    describer = ApplicationDescriber(app)

    def make_task() -> StreamOperatorTask:
        return StreamOperatorTask(describer)

    make_task.__qualname__ = f"operator_task_factory({getattr(app, '__qualname__', type(app).__qualname__)})"
    return make_task


__all__ = ["ApplicationDescriber", "StreamOperatorTask", "operator_task_factory"]
