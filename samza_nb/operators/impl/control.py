"""A task's end-of-stream and watermark bookkeeping, and what control messages do to its operators.

- A source partition has one producer: its end-of-stream arrives through the container
  (:meth:`ControlFlow.partition_ended`), its watermarks as in-band :class:`WatermarkMessage` envelopes.
- A partition of an intermediate stream has ``plan.streams[id].producers`` producers, whose control
  messages carry their task names and arrive on the stream's aggregation partition; the task consuming it,
  once a partition ends or its watermark advances, re-broadcasts the result without a task name to the
  other partitions (where it counts as final).
- When the watermark of an input stream (the minimum over the task's partitions of it) advances, the
  stream's input operator passes it on and :class:`WatermarkAdvanced` is published; each end-of-stream
  control message publishes :class:`EndOfStreamProgress`. When every partition of a stream ended, its
  input operator ends; when every partition of the task ended, the task commits and votes to shut down.

The bookkeeping of each partition is written to the ``samza-control`` store on every change (key
``eos|<system>|<stream>|<partition>`` or ``wm|...``, value the states' JSON snapshot), so it commits with
the offsets; :meth:`ControlFlow.restore` takes it back at init and :meth:`ControlFlow.catch_up` (at the
task's first call that can emit) passes what it restored through the operators.

End-of-stream is kept for intermediate partitions only, and only while a round is incomplete: a source
partition's end comes again on every start (the container never checkpoints it), and so, from the
producers, does the end of an intermediate partition whose every producer had ended (a job run again over
grown bounded inputs ends once more). What a restart must not lose is an incomplete round: a consumer that
had end-of-stream from one of two producers waits only for the other.
"""

from __future__ import annotations

from typing import Any

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.task import RequestScope
from samza_nb.control.messages import WATERMARK_NOT_EXIST, EndOfStreamMessage, WatermarkMessage
from samza_nb.control.sender import broadcast_to_other_partitions
from samza_nb.control.states import EndOfStreamStates, WatermarkStates
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.observe.events import EndOfStreamProgress, WatermarkAdvanced
from samza_nb.operators.impl.base import OpRuntime
from samza_nb.operators.impl.graph import TaskGraph
from samza_nb.operators.plan import APP_PLAN_KEY, CONTROL_STORE, ApplicationPlan


def state_key(kind: str, ssp: SystemStreamPartition) -> str:
    """The ``samza-control`` key of ``ssp``'s bookkeeping of ``kind`` ("eos" or "wm")."""
    return f"{kind}|{ssp.system}|{ssp.stream}|{ssp.partition}"


def producer_counts(
    plan: ApplicationPlan, ssps: frozenset[SystemStreamPartition]
) -> dict[SystemStreamPartition, int]:
    """How many producers each of ``ssps`` has: 1 for a source, the planned count for an intermediate."""
    counts: dict[SystemStreamPartition, int] = {}
    for ssp in ssps:
        stream_id = plan.by_system_stream.get(ssp.system_stream)
        if stream_id is None:
            raise ConfigError(
                f"{APP_PLAN_KEY} has no input stream for partition {ssp} of this task: was the job planned "
                "with other inputs?",
                key=APP_PLAN_KEY,
            )
        stream = plan.streams[stream_id]
        if stream.intermediate and stream.producers < 1:
            raise ConfigError(
                f"{APP_PLAN_KEY}: intermediate stream {stream_id!r} has {stream.producers} producers; the "
                "planner counts at least 1",
                key=APP_PLAN_KEY,
            )
        counts[ssp] = stream.producers if stream.intermediate else 1
    return counts


class ControlFlow:
    """The control side of one operator task (see the module docstring)."""

    def __init__(
        self,
        runtime: OpRuntime,
        plan: ApplicationPlan,
        graph: TaskGraph,
        ssps: frozenset[SystemStreamPartition],
        idle_timeout_ms: int = -1,
    ) -> None:
        self.runtime = runtime
        self.graph = graph
        counts = producer_counts(plan, ssps)
        self.eos = EndOfStreamStates(counts)
        self.watermarks = WatermarkStates(counts, idle_timeout_ms, runtime.now_ms)
        self.ssps = frozenset(ssps)
        self.partitions: dict[SystemStream, int] = {}
        for ssp in ssps:
            stream = plan.streams[plan.by_system_stream[ssp.system_stream]]
            if stream.intermediate:
                self.partitions[ssp.system_stream] = stream.partitions
        self.store: Any = runtime.context.get_store(CONTROL_STORE)
        self.finished = False
        self.pending = False
        """True while restored bookkeeping waits for :meth:`catch_up`."""

    # -- bookkeeping -----------------------------------------------------------------------------------
    def restore(self) -> None:
        """Take back the stored bookkeeping of the task's partitions (others' is ignored)."""
        ordered = sorted(self.ssps)
        eos_keys = {state_key("eos", ssp): ssp for ssp in ordered}
        wm_keys = {state_key("wm", ssp): ssp for ssp in ordered}
        for key, state in self.store.get_all([*eos_keys, *wm_keys]).items():
            if key in eos_keys:
                ssp = eos_keys[key]
                if ssp.system_stream not in self.partitions or _complete(state):
                    continue  # ends again this run (see the module)
                self.eos.restore(ssp, state)
            else:
                self.watermarks.restore(wm_keys[key], state)
            self.pending = True

    def _save_eos(self, ssp: SystemStreamPartition) -> None:
        self.store.put(state_key("eos", ssp), self.eos.state_of(ssp))

    def _save_watermark(self, ssp: SystemStreamPartition) -> None:
        self.store.put(state_key("wm", ssp), self.watermarks.state_of(ssp))

    def catch_up(self) -> None:
        """Pass the restored watermarks and ended streams through the operators (what was due fires)."""
        self.pending = False
        for system_stream in self.graph.inputs:
            self._stream_watermark(system_stream, None)
        for system_stream in self.graph.inputs:
            self._stream_ended(system_stream)
        self._finish_if_ended()

    # -- control messages ------------------------------------------------------------------------------
    def on_control(self, envelope: IncomingMessageEnvelope) -> None:
        """A control message on one of the task's partitions (a watermark on a source partition)."""
        message, ssp = envelope.message, envelope.ssp
        if type(message) is WatermarkMessage:
            self._take_watermark(ssp, message)
        elif type(message) is EndOfStreamMessage:
            self._take_end_of_stream(ssp, message)
        else:  # pragma: no cover - routes pass only control messages
            raise SamzaError(f"not a control message on {ssp} at offset {envelope.offset}: {message!r}")

    def _take_watermark(self, ssp: SystemStreamPartition, message: WatermarkMessage) -> None:
        advanced = self.watermarks.update(ssp, message.task_name, message.timestamp)
        self._save_watermark(ssp)
        if not advanced:
            return
        partitions = self.partitions.get(ssp.system_stream)
        if message.task_name is not None and partitions is not None:
            final = WatermarkMessage(timestamp=self.watermarks.watermark(ssp))
            self._send_all(broadcast_to_other_partitions(final, ssp, partitions))
        self._stream_watermark(ssp.system_stream, ssp)

    def _take_end_of_stream(self, ssp: SystemStreamPartition, message: EndOfStreamMessage) -> None:
        ended = self.eos.update(ssp, message.task_name)
        self._save_eos(ssp)
        runtime = self.runtime
        runtime.publish(
            EndOfStreamProgress(
                runtime.now_ms(),
                runtime.task_name,
                ssp,
                self.eos.producers_seen(ssp),
                self.eos.producer_count(ssp),
                self.eos.is_end_of_stream(ssp),
            )
        )
        if not ended:
            return
        partitions = self.partitions.get(ssp.system_stream)
        if message.task_name is not None and partitions is not None:
            self._send_all(broadcast_to_other_partitions(EndOfStreamMessage(), ssp, partitions))
        self._stream_ended(ssp.system_stream)
        self._finish_if_ended()

    def partition_ended(self, ssp: SystemStreamPartition) -> None:
        """The container took ``ssp``'s end-of-stream (a bounded partition reached its end; not saved: it
        comes again on every start)."""
        if ssp in self.eos and self.eos.update(ssp, None):
            self._stream_ended(ssp.system_stream)
        self._finish_if_ended()

    def all_partitions_ended(self) -> None:
        """The container says every partition of the task ended (each counts as ended here too)."""
        for ssp in sorted(self.ssps):
            if not self.eos.is_end_of_stream(ssp):
                self.partition_ended(ssp)
        self._finish_if_ended()

    # -- effects ---------------------------------------------------------------------------------------
    def _send_all(self, envelopes: list[Any]) -> None:
        send = self.runtime.collector.send  # type: ignore[union-attr]
        for envelope in envelopes:
            send(envelope)

    def _stream_watermark(self, system_stream: SystemStream, ssp: SystemStreamPartition | None) -> None:
        op = self.graph.inputs.get(system_stream)
        watermark = self.watermarks.stream_watermark(system_stream)
        if op is None or watermark <= op.input_watermark or watermark == WATERMARK_NOT_EXIST:
            return
        runtime = self.runtime
        runtime.publish(WatermarkAdvanced(runtime.now_ms(), runtime.task_name, system_stream, ssp, watermark))
        op.advance_to(watermark)

    def _stream_ended(self, system_stream: SystemStream) -> None:
        op = self.graph.inputs.get(system_stream)
        if op is not None and op.used and self.eos.stream_end_of_stream(system_stream):
            op.end()

    def _finish_if_ended(self) -> None:
        if self.finished or not self.eos.all_end_of_stream():
            return
        self.finished = True
        coordinator = self.runtime.coordinator
        if coordinator is not None:
            coordinator.commit(RequestScope.CURRENT_TASK)
            coordinator.shutdown(RequestScope.CURRENT_TASK)


def _complete(state: Any) -> bool:
    """True for a stored end-of-stream state whose round had ended (malformed ones are left to restore,
    which names them)."""
    return isinstance(state, dict) and state.get("ended") is True


__all__ = ["ControlFlow", "producer_counts", "state_key"]
