"""MessageStream: the fluent high-level API that builds an application's operator graph."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.operators.graph import (
    FilterSpec,
    FlatMapSpec,
    InputSpec,
    JoinSpec,
    MapSpec,
    MergeSpec,
    OperatorSpec,
    OpKind,
    PartitionBySpec,
    SendToSpec,
    SinkSpec,
    WindowSpec,
)
from samza_nb.operators.windows import Window

if TYPE_CHECKING:
    from samza_nb.operators.application import StreamApplicationDescriptor


def _identity(message: Any) -> Any:
    return message


class OutputStream:
    """An output stream of the application (``app.get_output_stream(stream_id)``); ``send_to`` it."""

    def __init__(self, descriptor: StreamApplicationDescriptor, stream_id: str) -> None:
        self.descriptor = descriptor
        self.stream_id = stream_id

    def __repr__(self) -> str:
        return f"OutputStream({self.stream_id!r})"


class MessageStream:
    """A stream of messages flowing out of one operator; each method adds an operator downstream and
    returns the stream of its output (``send_to`` and ``sink`` end a chain)."""

    def __init__(self, descriptor: StreamApplicationDescriptor, spec: OperatorSpec) -> None:
        self.descriptor = descriptor
        self.spec = spec

    # -- stateless ----------------------------------------------------------------------------------------
    def map(self, fn: Callable[[Any], Any], op_id: str | None = None) -> MessageStream:
        """Each message ``m`` becomes ``fn(m)``."""
        _callable("map", "fn", fn)
        return self._then(MapSpec(self._id(OpKind.MAP, op_id), OpKind.MAP, fn=fn))

    def filter(self, fn: Callable[[Any], Any], op_id: str | None = None) -> MessageStream:
        """Keeps the messages ``m`` with a true ``fn(m)``."""
        _callable("filter", "fn", fn)
        return self._then(FilterSpec(self._id(OpKind.FILTER, op_id), OpKind.FILTER, fn=fn))

    def flat_map(self, fn: Callable[[Any], Iterable[Any]], op_id: str | None = None) -> MessageStream:
        """Each message ``m`` becomes the messages of ``fn(m)`` (any iterable; empty drops it)."""
        _callable("flat_map", "fn", fn)
        return self._then(FlatMapSpec(self._id(OpKind.FLAT_MAP, op_id), OpKind.FLAT_MAP, fn=fn))

    def merge(self, *others: MessageStream, op_id: str | None = None) -> MessageStream:
        """The messages of this stream and ``others``, as they come."""
        for other in others:
            self._same_application("merge", other)
        spec = MergeSpec(self._id(OpKind.MERGE, op_id), OpKind.MERGE)
        self.descriptor.graph.add(spec, self.spec, *(o.spec for o in others))
        return MessageStream(self.descriptor, spec)

    # -- repartitioning -----------------------------------------------------------------------------------
    def partition_by(
        self,
        key_fn: Callable[[Any], Any],
        value_fn: Callable[[Any], Any] | None = None,
        op_id: str | None = None,
    ) -> MessageStream:
        """Repartitions by ``key_fn(m)`` through the intermediate stream
        ``<job.name>-<job.id>-partition_by-<op_id>``; the result is a stream of ``KV(key, value_fn(m))``."""
        _callable("partition_by", "key_fn", key_fn)
        if value_fn is not None:
            _callable("partition_by", "value_fn", value_fn)
        op_id = self._required_id(OpKind.PARTITION_BY, op_id)
        graph = self.descriptor.graph
        stream_id = self.descriptor.intermediate_stream_id(op_id)
        spec = PartitionBySpec(
            op_id, OpKind.PARTITION_BY, key_fn=key_fn, value_fn=value_fn or _identity, stream_id=stream_id
        )
        graph.add(spec, self.spec)
        source = InputSpec(
            f"{op_id}:input", OpKind.INPUT, stream_id=stream_id, intermediate=True, source=spec
        )
        graph.add(source)
        return MessageStream(self.descriptor, source)

    # -- stateful -----------------------------------------------------------------------------------------
    def window(self, window: Window, op_id: str | None = None) -> MessageStream:
        """Folds messages into the panes of ``window`` (:class:`~.windows.Windows`); a stream of
        :class:`~.values.WindowPane`."""
        if not isinstance(window, Window):
            raise SamzaError(
                f"window: expected a Windows.tumbling(...) or Windows.session(...), got {window!r}"
            )
        op_id = self._required_id(OpKind.WINDOW, op_id)
        return self._then(WindowSpec(op_id, OpKind.WINDOW, window=window))

    def join(
        self,
        other: MessageStream,
        key_fn: Callable[[Any], Any],
        other_key_fn: Callable[[Any], Any],
        join_fn: Callable[[Any, Any], Any],
        ttl_ms: int,
        op_id: str | None = None,
    ) -> MessageStream:
        """Joins this stream with ``other`` where ``key_fn(m) == other_key_fn(o)``, emitting
        ``join_fn(m, o)`` (this side first whichever arrives last); a message is kept ``ttl_ms`` for a
        partner. Both streams need the same partition count (partition both by the join key)."""
        self._same_application("join", other)
        for name, fn in (("key_fn", key_fn), ("other_key_fn", other_key_fn), ("join_fn", join_fn)):
            _callable("join", name, fn)
        if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms <= 0:
            raise SamzaError(f"join: ttl_ms must be a positive int (ms), got {ttl_ms!r}")
        op_id = self._required_id(OpKind.JOIN, op_id)
        spec = JoinSpec(
            op_id,
            OpKind.JOIN,
            key_fn=key_fn,
            other_key_fn=other_key_fn,
            join_fn=join_fn,
            ttl_ms=ttl_ms,
        )
        self.descriptor.graph.add(spec, self.spec, other.spec)
        return MessageStream(self.descriptor, spec)

    # -- ends ---------------------------------------------------------------------------------------------
    def send_to(self, output: OutputStream, op_id: str | None = None) -> None:
        """Sends every message to ``output`` (a ``KV``: its key and value)."""
        if not isinstance(output, OutputStream):
            raise SamzaError(f"send_to: expected an app.get_output_stream(...), got {output!r}")
        if output.descriptor is not self.descriptor:
            raise SamzaError(f"send_to: {output!r} belongs to another application")
        self._then(SendToSpec(self._id(OpKind.SEND_TO, op_id), OpKind.SEND_TO, stream_id=output.stream_id))

    def sink(self, fn: Callable[[Any, Any, Any], Any], op_id: str | None = None) -> None:
        """Calls ``fn(message, collector, coordinator)`` for every message."""
        _callable("sink", "fn", fn)
        self._then(SinkSpec(self._id(OpKind.SINK, op_id), OpKind.SINK, fn=fn))

    # -- helpers ------------------------------------------------------------------------------------------
    def _then(self, spec: OperatorSpec) -> MessageStream:
        self.descriptor.graph.add(spec, self.spec)
        return MessageStream(self.descriptor, spec)

    def _id(self, kind: OpKind, op_id: str | None) -> str:
        return self.descriptor.graph.new_id(kind, op_id)

    def _required_id(self, kind: OpKind, op_id: str | None) -> str:
        if op_id is None:
            raise SamzaError(
                f"{kind.value} needs an op_id: it names the operator's "
                f"{'intermediate stream' if kind is OpKind.PARTITION_BY else 'state store'}, "
                "which must stay the same across restarts"
            )
        return self._id(kind, op_id)

    def _same_application(self, what: str, other: object) -> None:
        if not isinstance(other, MessageStream):
            raise SamzaError(f"{what}: expected a MessageStream, got {other!r}")
        if other.descriptor is not self.descriptor:
            raise SamzaError(f"{what}: the streams belong to different applications")

    def __repr__(self) -> str:
        return f"MessageStream(after {self.spec.kind.value} {self.spec.op_id!r})"


def _callable(what: str, name: str, fn: object) -> None:
    if not callable(fn):
        raise SamzaError(f"{what}: {name} must be callable, got {fn!r}")


__all__ = ["MessageStream", "OutputStream"]
