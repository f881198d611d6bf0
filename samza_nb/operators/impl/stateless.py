"""The stateless operators: map, filter, flat_map, merge, send_to and sink. Each keeps the timestamp of
the message it was given."""

from __future__ import annotations

from typing import Any

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream
from samza_nb.operators.graph import FilterSpec, FlatMapSpec, MapSpec, SendToSpec, SinkSpec
from samza_nb.operators.impl.base import Emit, OperatorImpl, OpRuntime
from samza_nb.operators.values import KV


class MapImpl(OperatorImpl):
    """``fn(message)`` downstream."""

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, MapSpec)
        fn, emit = self.spec.fn, self.emit

        def on_map(message: Any, timestamp: int | None) -> None:
            emit(fn(message), timestamp)

        return on_map


class FilterImpl(OperatorImpl):
    """The messages with a true ``fn(message)`` downstream."""

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, FilterSpec)
        fn, emit = self.spec.fn, self.emit

        def on_filter(message: Any, timestamp: int | None) -> None:
            if fn(message):
                emit(message, timestamp)

        return on_filter


class FlatMapImpl(OperatorImpl):
    """Each message of ``fn(message)`` downstream."""

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, FlatMapSpec)
        fn, emit = self.spec.fn, self.emit

        def on_flat_map(message: Any, timestamp: int | None) -> None:
            for result in fn(message):
                emit(result, timestamp)

        return on_flat_map


class MergeImpl(OperatorImpl):
    """Every input's messages downstream as they come."""

    def entry(self, index: int) -> Emit:
        return self.emit


class SendToImpl(OperatorImpl):
    """Sends each message to an output stream: a ``KV`` as key and value, anything else as the message
    with no key, both with the message's timestamp."""

    def __init__(self, spec: SendToSpec, runtime: OpRuntime, system_stream: SystemStream) -> None:
        super().__init__(spec, runtime)
        self.system_stream = system_stream

    def entry(self, index: int) -> Emit:
        runtime, stream = self.runtime, self.system_stream
        envelope = OutgoingMessageEnvelope

        def on_send_to(message: Any, timestamp: int | None) -> None:
            if type(message) is KV:
                runtime.collector.send(  # type: ignore[union-attr]
                    envelope(stream, message[1], message[0], None, None, timestamp)
                )
            else:
                runtime.collector.send(  # type: ignore[union-attr]
                    envelope(stream, message, None, None, None, timestamp)
                )

        return on_send_to


class SinkImpl(OperatorImpl):
    """Calls ``fn(message, collector, coordinator)``."""

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, SinkSpec)
        fn, runtime = self.spec.fn, self.runtime

        def on_sink(message: Any, timestamp: int | None) -> None:
            fn(message, runtime.collector, runtime.coordinator)

        return on_sink


__all__ = ["FilterImpl", "FlatMapImpl", "MapImpl", "MergeImpl", "SendToImpl", "SinkImpl"]
