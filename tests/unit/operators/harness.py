"""Running applications' operator tasks: on TestRunner (planned by the planner), or called directly by a
:class:`Driver` with a plan written by hand (one job, grouped by partition) on real DuckDB stores."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from samza_nb.api.streams import (
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)
from samza_nb.api.task import TaskContext
from samza_nb.config import Config
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.control.messages import WatermarkMessage
from samza_nb.operators.application import describe_application
from samza_nb.operators.graph import JoinSpec, WindowSpec
from samza_nb.operators.plan import APP_PLAN_KEY, CONTROL_STORE, ApplicationPlan, StreamPlan
from samza_nb.operators.task import StreamOperatorTask, operator_task_factory
from samza_nb.storage.duckdb.state_file import StateFile
from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory
from samza_nb.testing import LOOP_MODES, LoopMode
from samza_nb.testing.runner import SYSTEM, TestRunner

JOB = "test-job"


def plan_for(
    app: Any, sources: Mapping[str, int], intermediate_partitions: int | None = None
) -> ApplicationPlan:
    """The plan of ``app`` as one job whose tasks group its inputs by partition: ``sources`` maps each
    input stream id to its partition count."""
    graph = describe_application(app, Config({"job.name": JOB})).graph
    partitions = intermediate_partitions or max(sources.values())
    counts = dict(sources)
    streams: dict[str, StreamPlan] = {
        sid: StreamPlan(sid, SystemStream(SYSTEM, sid), n) for sid, n in sources.items()
    }
    for spec in graph.intermediate_inputs():
        assert spec.source is not None
        producers = max(counts.get(s, partitions) for s in graph.upstream_inputs(spec.source))
        streams[spec.stream_id] = StreamPlan(
            spec.stream_id, SystemStream(SYSTEM, spec.stream_id), partitions, True, producers
        )
        counts[spec.stream_id] = partitions
    for out in graph.outputs:
        streams[out] = StreamPlan(out, SystemStream(SYSTEM, out), 0, output=True)
    inputs = frozenset(s for s, p in streams.items() if not p.output)
    return ApplicationPlan(streams, (inputs,))


def app_config(app: Any, plan: ApplicationPlan, state_dir: Path) -> dict[str, str]:
    """The job config the operator task reads: the plan, inputs, stores of the windows and joins."""
    graph = describe_application(app, Config({"job.name": JOB})).graph
    config = {
        APP_PLAN_KEY: plan.to_json(),
        "task.inputs": ",".join(
            f"{p.system_stream.system}.{p.system_stream.stream}"
            for p in plan.streams.values()
            if not p.output
        ),
        "job.logged.store.base.dir": str(state_dir),
        f"stores.{CONTROL_STORE}.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        f"stores.{CONTROL_STORE}.key.serde": "string",
        f"stores.{CONTROL_STORE}.msg.serde": "json",
    }
    for spec in graph.operators:
        if isinstance(spec, WindowSpec | JoinSpec):
            config[f"stores.{spec.op_id}.factory"] = "samza_nb.storage.duckdb.DuckDBStoreFactory"
            config[f"stores.{spec.op_id}.key.serde"] = "pickle"
            config[f"stores.{spec.op_id}.msg.serde"] = "pickle"
    return config


APPLICATION_MODES = tuple(mode for mode in LOOP_MODES if mode.for_applications)
"""The loop modes an application can run in (its operator tasks take one message at a time)."""


def app_runner(
    app: Any, sources: Mapping[str, Mapping[int, list[Any]]], mode: LoopMode | None = None, **config: Any
) -> TestRunner:
    """``TestRunner.of(app, mode=mode)`` with ``sources`` (stream id → partition → items) and every output
    of the application added; ``config`` keys use "_" for "." (``job_logged_store_base_dir=...``)."""
    runner = TestRunner.of(app, mode=mode)
    for stream, partitions in sources.items():
        runner.add_input(stream, dict(partitions))
    for output in describe_application(app, Config({"job.name": JOB})).graph.outputs:
        runner.add_output(output)
    return runner.add_config({key.replace("_", "."): value for key, value in config.items()})


class _Collector:
    def __init__(self, sent: list[OutgoingMessageEnvelope]) -> None:
        self.send = sent.append


class Driver:
    """One operator task called directly, as the container calls it, on real DuckDB stores in a state
    file under ``state_dir``: messages go in with :meth:`send`, sent envelopes collect in :attr:`sent`,
    events in :attr:`events`, the last call's requests in :attr:`coordinator`. ``now`` is its clock."""

    def __init__(
        self,
        app: Any,
        plan: ApplicationPlan,
        task_name: str,
        ssps: list[SystemStreamPartition],
        state_dir: Path,
        *,
        now: float = 0.0,
        factory: Callable[[], StreamOperatorTask] | None = None,
    ) -> None:
        self.app = app
        self.factory = factory or operator_task_factory(app)
        self.plan = plan
        self.task_name = task_name
        self.ssps = frozenset(ssps)
        self.state_dir = state_dir
        self.now = now
        self.sent: list[OutgoingMessageEnvelope] = []
        self.collector = _Collector(self.sent)
        self.events: list[Any] = []
        self.offsets: dict[SystemStreamPartition, int] = {}
        self.coordinator = ReadableCoordinator(task_name)
        self.task: StreamOperatorTask
        self._file: StateFile | None = None
        self._parts: list[Any] = []
        self.start()

    def start(self) -> None:
        """Open the stores (as committed) and init a new task on them."""
        config = Config({"job.name": JOB, **app_config(self.app, self.plan, self.state_dir)})
        self._file = StateFile(self.state_dir / f"{self.task_name}.duckdb", JOB, "1")
        self._file.open()
        names = sorted(
            {k.split(".")[1] for k in config if k.startswith("stores.") and k.endswith(".factory")}
        )
        self._parts = [
            DuckDBStoreFactory().get_store(name, 0, config, self._file.connection.cursor()) for name in names
        ]
        stores = {name: part.store for name, part in zip(names, self._parts, strict=True)}
        context = TaskContext(
            self.task_name, self.ssps, config, stores, publish=self.events.append, now_ms=lambda: self.now
        )
        self.task = self.factory()
        self.task.init(context)

    def commit(self) -> None:
        """Flush the stores and commit their writes to the state file."""
        assert self._file is not None
        for part in self._parts:
            part.store.flush()
        with self._file.transaction() as tx:
            for part in self._parts:
                tx.write_store(part.engine)

    def restart(self, *, commit: bool = True) -> None:
        """Stop (after a commit unless told not to) and start a new task on what was committed."""
        if commit:
            self.commit()
        self.task.close()
        for part in self._parts:
            part.engine.close()
        assert self._file is not None
        self._file.close()
        self.start()

    def message(
        self, ssp: SystemStreamPartition, message: Any, timestamp: int | None = None, key: Any = None
    ) -> None:
        """Process one envelope of ``ssp``."""
        offset = self.offsets.get(ssp, 0)
        self.offsets[ssp] = offset + 1
        self.coordinator.reset()
        envelope = IncomingMessageEnvelope(ssp, str(offset), key, message, timestamp)
        self.task.process(envelope, self.collector, self.coordinator)

    def watermark(self, ssp: SystemStreamPartition, timestamp: int, task_name: str | None = None) -> None:
        """A watermark control message on ``ssp``."""
        self.message(ssp, WatermarkMessage(task_name, timestamp=timestamp))

    def end(self, ssp: SystemStreamPartition) -> None:
        """The container took ``ssp``'s end-of-stream."""
        self.coordinator.reset()
        self.task.on_partition_end(ssp, self.collector, self.coordinator)

    def window(self) -> None:
        """The window timer fired."""
        self.coordinator.reset()
        self.task.window(self.collector, self.coordinator)

    def take(self) -> list[OutgoingMessageEnvelope]:
        """The envelopes sent since the last take."""
        sent = list(self.sent)
        self.sent.clear()
        return sent

    def close(self) -> None:
        """Close the task and the state file."""
        self.task.close()
        for part in self._parts:
            part.engine.close()
        if self._file is not None:
            self._file.close()
