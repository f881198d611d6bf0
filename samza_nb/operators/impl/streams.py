"""Where a task's chains start and where they leave it for an intermediate stream: the input operators
(one per input stream of the stage) and partition_by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samza_nb.api.streams import IncomingMessageEnvelope, OutgoingMessageEnvelope, SystemStream
from samza_nb.control.messages import (
    CONTROL_MESSAGE_TYPES,
    EndOfStreamMessage,
    WatermarkMessage,
)
from samza_nb.control.sender import to_aggregation_partition
from samza_nb.operators.graph import InputSpec, PartitionBySpec
from samza_nb.operators.impl.base import WATERMARK_MAX, Emit, OperatorImpl, OpRuntime
from samza_nb.operators.values import KV

Route = Callable[[IncomingMessageEnvelope], None]
"""What the operator task calls with each envelope of one input partition."""

_new_tuple = tuple.__new__


class InputImpl(OperatorImpl):
    """The start of the chains of one input stream. Its watermark is the stream's (the minimum over the
    task's partitions of it); it ends when all of them have. An input this task holds no partition of
    (``used`` false) has ended from the start and never holds a watermark back."""

    def __init__(self, spec: InputSpec, runtime: OpRuntime, system_stream: SystemStream, used: bool) -> None:
        super().__init__(spec, runtime)
        self.system_stream = system_stream
        self.intermediate = spec.intermediate
        self.used = used
        if not used:
            self.output_watermark = WATERMARK_MAX
            self.ended = True

    def entry(self, index: int) -> Emit:
        raise TypeError(f"input operator {self.op_id!r} has no upstream operator")

    def route(self, on_control: Route) -> Route:
        """The callable for each envelope of a partition of this stream: user messages go downstream
        (from an intermediate stream as ``KV(envelope key, message)``); control messages go to
        ``on_control`` (on a source stream, only watermarks can arrive in-band)."""
        emit = self.emit
        if self.intermediate:
            control_types = CONTROL_MESSAGE_TYPES

            def on_intermediate(envelope: IncomingMessageEnvelope) -> None:
                message = envelope.message
                if type(message) in control_types:
                    on_control(envelope)
                else:
                    emit(_new_tuple(KV, (envelope.key, message)), envelope.timestamp)

            return on_intermediate

        def on_source(envelope: IncomingMessageEnvelope) -> None:
            message = envelope.message
            if type(message) is WatermarkMessage:
                on_control(envelope)
            else:
                emit(message, envelope.timestamp)

        return on_source

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

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, PartitionBySpec)
        key_fn, value_fn = self.spec.key_fn, self.spec.value_fn
        runtime, stream = self.runtime, self.system_stream
        envelope = OutgoingMessageEnvelope

        def on_partition_by(message: Any, timestamp: int | None) -> None:
            key = key_fn(message)
            if key is None:
                out = envelope(stream, value_fn(message), None, None, 0, timestamp)
            else:
                out = envelope(stream, value_fn(message), key, key, None, timestamp)
            runtime.collector.send(out)  # type: ignore[union-attr]

        return on_partition_by

    def _send_control(self, message: EndOfStreamMessage | WatermarkMessage) -> None:
        envelope = to_aggregation_partition(message, self.system_stream, self.partitions)
        self.runtime.collector.send(envelope)  # type: ignore[union-attr]

    def handle_watermark(self, watermark: int) -> None:
        if self.used:
            self._send_control(WatermarkMessage(self.runtime.task_name, timestamp=watermark))

    def handle_end_of_stream(self) -> None:
        if self.used:
            self._send_control(EndOfStreamMessage(self.runtime.task_name))


__all__ = ["InputImpl", "PartitionByImpl", "Route"]
