"""The operator graph an application describes: operator specs linked upstream (``prev``) and downstream
(``next``), and the streams they read and write. Built by :class:`~.stream.MessageStream`; planned by
:mod:`.planner`; run by the operator task. Specs are descriptions only: they hold the user's functions
and never state.

A ``partition_by`` ends a chain: its spec sends to an intermediate stream, and the stream it returns starts
at that stream's :class:`InputSpec` (``intermediate=True``). So every chain of operators starts at an input
spec, and cutting the graph at intermediate streams gives the stages a split application runs as jobs.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from samza_nb.errors import SamzaError
from samza_nb.operators.windows import Window

OP_ID_PATTERN: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]*$")
"""What an op id looks like: it becomes part of stream and store names."""


class OpKind(enum.Enum):
    """What an operator does."""

    INPUT = "input"
    MAP = "map"
    FILTER = "filter"
    FLAT_MAP = "flat_map"
    PARTITION_BY = "partition_by"
    WINDOW = "window"
    JOIN = "join"
    MERGE = "merge"
    SEND_TO = "send_to"
    SINK = "sink"


@dataclass(eq=False)
class OperatorSpec:
    """One operator: its id (unique in the application), kind, and links. Compared by identity."""

    op_id: str
    kind: OpKind
    prev: list[OperatorSpec] = field(default_factory=list, repr=False)
    next: list[OperatorSpec] = field(default_factory=list, repr=False)

    def __hash__(self) -> int:
        return id(self)


@dataclass(eq=False)
class InputSpec(OperatorSpec):
    """Where a chain starts: a source input stream, or an intermediate stream (``intermediate=True``, fed
    by ``partition_by`` :attr:`source`)."""

    stream_id: str = ""
    intermediate: bool = False
    source: PartitionBySpec | None = field(default=None, repr=False)

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class MapSpec(OperatorSpec):
    """``fn(message) -> message``."""

    fn: Callable[[Any], Any] = field(default=lambda m: m, repr=False)

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class FilterSpec(OperatorSpec):
    """Keeps messages for which ``fn(message)`` is true."""

    fn: Callable[[Any], Any] = field(default=lambda m: True, repr=False)

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class FlatMapSpec(OperatorSpec):
    """``fn(message) -> iterable of messages``."""

    fn: Callable[[Any], Any] = field(default=lambda m: (m,), repr=False)

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class PartitionBySpec(OperatorSpec):
    """Sends ``KV(key_fn(m), value_fn(m))`` to intermediate stream :attr:`stream_id` (key = envelope key,
    value = message; the partition by the key); the chain continues at that stream's input spec."""

    key_fn: Callable[[Any], Any] = field(default=lambda m: None, repr=False)
    value_fn: Callable[[Any], Any] = field(default=lambda m: m, repr=False)
    stream_id: str = ""

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class WindowSpec(OperatorSpec):
    """Folds messages into panes of :attr:`window`; emits a :class:`~.values.WindowPane` per fired pane.
    Its state lives in the store named after the op id."""

    window: Window | None = field(default=None, repr=False)

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class JoinSpec(OperatorSpec):
    """Joins ``prev[0]`` (this side) with ``prev[1]`` (the other side) on ``key_fn(m) ==
    other_key_fn(o)``, emitting ``join_fn(m, o)``; a message waits ``ttl_ms`` for its partner. Its state
    lives in the store named after the op id."""

    key_fn: Callable[[Any], Any] = field(default=lambda m: None, repr=False)
    other_key_fn: Callable[[Any], Any] = field(default=lambda m: None, repr=False)
    join_fn: Callable[[Any, Any], Any] = field(default=lambda m, o: (m, o), repr=False)
    ttl_ms: int = 0

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class MergeSpec(OperatorSpec):
    """Messages of every stream in ``prev``, as they come."""

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class SendToSpec(OperatorSpec):
    """Sends each message to output stream :attr:`stream_id` (a ``KV`` message: key and value)."""

    stream_id: str = ""

    __hash__ = OperatorSpec.__hash__


@dataclass(eq=False)
class SinkSpec(OperatorSpec):
    """Calls ``fn(message, collector, coordinator)``."""

    fn: Callable[[Any, Any, Any], Any] = field(default=lambda m, c, k: None, repr=False)

    __hash__ = OperatorSpec.__hash__


class ApplicationGraph:
    """Every operator of an application, its input streams (sources and intermediates, by stream id) and
    output streams. Op ids are unique: adding a duplicate is a SamzaError naming it."""

    def __init__(self) -> None:
        self.inputs: dict[str, InputSpec] = {}
        self.outputs: list[str] = []
        self.operators: list[OperatorSpec] = []
        self._ids: set[str] = set()
        self._counters: dict[OpKind, int] = {}

    def new_id(self, kind: OpKind, op_id: str | None) -> str:
        """``op_id`` checked (well-formed, unused), or a generated ``<kind>-<n>`` for an unnamed op."""
        if op_id is None:
            n = self._counters.get(kind, 0)
            while True:
                n += 1
                candidate = f"{kind.value.replace('_', '-')}-{n}"
                if candidate not in self._ids:
                    break
            self._counters[kind] = n
            return candidate
        if not isinstance(op_id, str) or not OP_ID_PATTERN.match(op_id):
            raise SamzaError(
                f"op id {op_id!r} is not valid: use letters, digits, '-', '_' (it names streams and stores)"
            )
        if op_id in self._ids:
            raise SamzaError(f"op id {op_id!r} is used twice in the application: op ids must be unique")
        return op_id

    def add(self, spec: OperatorSpec, *upstream: OperatorSpec) -> OperatorSpec:
        """Register ``spec`` downstream of ``upstream`` (in that order)."""
        if spec.op_id in self._ids:
            raise SamzaError(f"op id {spec.op_id!r} is used twice in the application: op ids must be unique")
        self._ids.add(spec.op_id)
        self.operators.append(spec)
        for up in upstream:
            spec.prev.append(up)
            up.next.append(spec)
        if isinstance(spec, InputSpec):
            self.inputs[spec.stream_id] = spec
        return spec

    def source_inputs(self) -> list[InputSpec]:
        """The input specs of source streams, in the order they were declared."""
        return [spec for spec in self.inputs.values() if not spec.intermediate]

    def intermediate_inputs(self) -> list[InputSpec]:
        """The input specs of intermediate streams, in the order their partition_by ops were declared."""
        return [spec for spec in self.inputs.values() if spec.intermediate]

    def walk(self, start: OperatorSpec) -> Iterator[OperatorSpec]:
        """``start`` and every operator downstream of it within its stage (not past partition_by), each
        once, depth first."""
        seen: set[int] = set()
        stack = [start]
        while stack:
            spec = stack.pop()
            if id(spec) in seen:
                continue
            seen.add(id(spec))
            yield spec
            stack.extend(reversed(spec.next))

    def upstream_inputs(self, spec: OperatorSpec) -> set[str]:
        """The stream ids of the input specs (within the stage) that lead to ``spec``."""
        result: set[str] = set()
        stack = [spec]
        seen: set[int] = set()
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if isinstance(current, InputSpec):
                result.add(current.stream_id)
            stack.extend(current.prev)
        return result


__all__ = [
    "OP_ID_PATTERN",
    "ApplicationGraph",
    "FilterSpec",
    "FlatMapSpec",
    "InputSpec",
    "JoinSpec",
    "MapSpec",
    "MergeSpec",
    "OpKind",
    "OperatorSpec",
    "PartitionBySpec",
    "SendToSpec",
    "SinkSpec",
    "WindowSpec",
]
