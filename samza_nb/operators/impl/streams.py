"""Where a task's chains start and where they leave it for an intermediate stream: the input operators
(one per input stream of the stage) and partition_by."""

from __future__ import annotations

from collections.abc import Callable

from samza_nb import crash_points
from samza_nb.api.streams import IncomingMessageEnvelope, OutgoingMessageEnvelope, SystemStream
from samza_nb.control.messages import EndOfStreamMessage, WatermarkMessage
from samza_nb.control.sender import to_aggregation_partition
from samza_nb.operators.graph import InputSpec, PartitionBySpec
from samza_nb.operators.impl.base import WATERMARK_MAX, OperatorImpl, OpRuntime
from samza_nb.operators.impl.compile import Inline
from samza_nb.operators.stream import _identity as identity

Route = Callable[[IncomingMessageEnvelope], None]
"""What the operator task calls with each envelope of one input partition."""


class InputImpl(OperatorImpl):
    """The start of the chains of one input stream (its route is compiled: :mod:`.compile`). Its
    watermark is the stream's (the minimum over the task's partitions of it); it ends when all of them
    have. An input this task holds no partition of (``used`` false) has ended from the start and never
    holds a watermark back (nor do the operators it alone feeds: the task's graph starts them ended)."""

    def __init__(self, spec: InputSpec, runtime: OpRuntime, system_stream: SystemStream, used: bool) -> None:
        super().__init__(spec, runtime)
        self.system_stream = system_stream
        self.intermediate = spec.intermediate
        self.used = used
        if not used:
            self.output_watermark = WATERMARK_MAX
            self.ended = True

    def advance_to(self, watermark: int) -> None:
        """The stream's watermark in this task is now ``watermark``: pass it on if it advanced."""
        if watermark > self.input_watermark:
            self.input_watermark = watermark
            self.set_output_watermark(watermark)

    def end(self) -> None:
        """Every partition of the stream in this task has ended."""
        if not self.ended:
            self.ended = True
            for downstream, _ in self.next:
                downstream.prev_ended()


class PartitionByImpl(OperatorImpl):
    """Sends ``value_fn(m)`` keyed by ``key_fn(m)`` to the intermediate stream (partition 0 for a None
    key), with the message's timestamp. When this task produces to the stream (``used``: it holds a
    partition of an input leading here), its advancing input watermark and its end-of-stream go to the
    stream's aggregation partition with the task's name."""

    def __init__(
        self,
        spec: PartitionBySpec,
        runtime: OpRuntime,
        system_stream: SystemStream,
        partitions: int,
        used: bool,
    ) -> None:
        super().__init__(spec, runtime)
        self.system_stream = system_stream
        self.partitions = partitions
        self.used = used

    @property
    def inlinable(self) -> bool:
        return True

    def inline(self, var: str, out: str, prefix: str) -> Inline:
        assert isinstance(self.spec, PartitionBySpec)
        key_fn, stream, value_fn = f"{prefix}_key", f"{prefix}_stream", f"{prefix}_value"
        value = var if self.spec.value_fn is identity else f"{value_fn}({var})"
        return Inline(
            (
                f"{out} = {key_fn}({var})",
                f"if {out} is None:",
                f"    collector.send(Envelope({stream}, {value}, None, None, 0, ts))",
                "else:",
                f"    collector.send(Envelope({stream}, {value}, {out}, {out}, None, ts))",
            ),
            {
                key_fn: self.spec.key_fn,
                value_fn: self.spec.value_fn,
                stream: self.system_stream,
                "Envelope": OutgoingMessageEnvelope,
            },
        )

    def _send_control(self, message: EndOfStreamMessage | WatermarkMessage) -> None:
        envelope = to_aggregation_partition(message, self.system_stream, self.partitions)
        self.runtime.collector.send(envelope)  # type: ignore[union-attr]

    def handle_watermark(self, watermark: int) -> None:
        if self.used:
            self._send_control(WatermarkMessage(self.runtime.task_name, timestamp=watermark))

    def handle_end_of_stream(self) -> None:
        if self.used:
            self._send_control(EndOfStreamMessage(self.runtime.task_name))
            if crash_points.ARMED:
                crash_points.reached("control.end-of-stream-sent")


__all__ = ["InputImpl", "PartitionByImpl", "Route"]
