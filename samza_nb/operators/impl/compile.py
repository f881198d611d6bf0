"""Compiling a task's chains of operators into a few Python functions.

A message costs a Python call per operator when each operator calls the next. The stateless operators
(map, filter, flat_map, a merge of one stream, send_to, sink, partition_by) instead give a few lines of
source (:class:`Inline`); an operator that keeps state (window, join) or has several inputs is a call
boundary, with an entry of its own or, reached from one place, lines taking the message in
(:meth:`OperatorImpl.inline_entry`, a tumbling window's). The compiler writes the operator task's
``process``: the envelope's partition picks its input stream's chains (control messages aside, the
message through every inlined operator up to the call boundaries); and for each call-boundary operator
the *emit* function its results go through. So a user message costs one call of ``process``, the
user's functions, and the calls of operators that could not be inlined.

Compiled code objects are cached by their source (:func:`samza_nb.codegen.compile_function`, which also
lets tracebacks show the generated lines): the tasks of a job share them; only the names they are bound
to (the user's functions, streams, downstream entries) are each task's own.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from samza_nb.codegen import compile_function
from samza_nb.control.messages import CONTROL_MESSAGE_TYPES, WatermarkMessage
from samza_nb.operators.impl.base import Emit, MissingTimestamp, OperatorImpl
from samza_nb.operators.values import KV

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.api.task import MessageCollector, TaskCoordinator
    from samza_nb.operators.impl.streams import InputImpl, Route

Process = Callable[["IncomingMessageEnvelope", "MessageCollector", "TaskCoordinator"], None]
"""The operator task's compiled ``process``."""


@dataclass(frozen=True)
class ProcessHooks:
    """What the compiled ``process`` calls besides the operators: ``on_control(envelope)`` for a control
    message, ``unknown(envelope)`` for a partition that is no input of the task, ``missing(exc,
    envelope)`` when an event-time operator got a message without a timestamp, and ``catch_up()`` before
    the first envelope when ``catching_up``."""

    on_control: Route
    unknown: Route
    missing: Callable[[MissingTimestamp, IncomingMessageEnvelope], None]
    catch_up: Callable[[], None]
    catching_up: bool


def stop_catching_up(process: Process) -> None:
    """``process`` no longer calls ``catch_up`` first."""
    process.__globals__["catching_up"] = False


MAX_DEPTH: Final = 12
"""The deepest block nesting (filters, flat_maps) inlined into one function; Python allows 20. Deeper
operators get an entry function of their own."""


@dataclass(frozen=True)
class Inline:
    """An operator's source lines for input variable ``var``: statements at the current indentation;
    ``opens`` when the last one opens a block (``if``/``for``) the rest goes into; ``output`` the variable
    holding the operator's result (None: nothing goes downstream); ``names`` what the lines refer to."""

    lines: tuple[str, ...]
    names: Mapping[str, Any] = field(default_factory=dict)
    opens: bool = False
    output: str | None = None


_CONTEXT = {name: re.compile(rf"\b{name}\b") for name in ("collector", "coordinator")}


class _Source:
    """The lines and names of one function being written. Inlined lines send with ``collector`` and
    hand ``coordinator`` to sinks: the operator task's ``process`` has them as parameters; any other
    function (``with_context``) takes them from the runtime first, when its lines use them."""

    def __init__(self, header: str, runtime: Any, *, with_context: bool = True) -> None:
        self.lines = [header]
        self.names: dict[str, Any] = {"runtime": runtime}
        self._ids = itertools.count()
        self._with_context = with_context

    def name(self, value: Any, hint: str) -> str:
        """A fresh global name for ``value``."""
        name = f"{hint}{next(self._ids)}"
        self.names[name] = value
        return name

    def fresh(self) -> str:
        """A fresh local variable name."""
        return f"v{next(self._ids)}"

    def add(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def function(self, name: str) -> Any:
        lines = self.lines
        if self._with_context:
            body = "\n".join(lines[1:])
            context = [f"    {n} = runtime.{n}" for n, pattern in _CONTEXT.items() if pattern.search(body)]
            lines = [lines[0], *context, *lines[1:]]
        return compile_function(name, "\n".join(lines), f"operators {name}", self.names)


class ChainCompiler:
    """Writes the operator task's ``process`` (every input stream's chains), the emit function of each
    call-boundary operator and the entries of operators reached from several places (see the module
    docstring)."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._entries: dict[tuple[int, int], Emit] = {}

    def _source(self, header: str, *, with_context: bool = True) -> _Source:
        return _Source(header, self._runtime, with_context=with_context)

    def bind(self, operators: list[OperatorImpl]) -> None:
        """Give every call-boundary operator of ``operators`` (upstream first) its emit function."""
        for op in reversed(operators):
            if not op.inlinable and op.prev:
                op.emit = self._emitter(op)

    def _emitter(self, op: OperatorImpl) -> Emit:
        source = self._source("def emit(m, ts):")
        self._downstream(source, op, "m", 1)
        if len(source.lines) == 1:
            source.add(1, "pass")
        emit: Emit = source.function("emit")
        return emit

    def entry(self, op: OperatorImpl, index: int) -> Emit:
        """The callable taking messages on input ``index`` of ``op``."""
        key = (id(op), index)
        found = self._entries.get(key)
        if found is None:
            if op.inlinable:
                source = self._source("def entry(m, ts):")
                self._inline(source, op, "m", 1)
                if len(source.lines) == 1:
                    source.add(1, "pass")
                found = source.function("entry")
            else:
                found = op.entry(index)
            self._entries[key] = found
        return found

    def process(
        self,
        inputs: Sequence[tuple[InputImpl, frozenset[SystemStreamPartition]]],
        hooks: ProcessHooks,
    ) -> Process:
        """The operator task's ``process(envelope, collector, coordinator)``: the envelope's partition
        picks its input operator's chains (a partition of none is ``hooks.unknown``); control messages go
        to ``hooks.on_control`` (on a source stream only watermarks can arrive in-band); user messages
        (from an intermediate stream as ``KV(envelope key, message)``) go downstream with the envelope's
        time; a :class:`MissingTimestamp` goes to ``hooks.missing`` with the envelope. While the global
        ``catching_up`` is true (see :func:`stop_catching_up`), ``hooks.catch_up()`` runs first."""
        source = self._source("def process(envelope, collector, coordinator):", with_context=False)
        source.names.update(
            on_control=hooks.on_control,
            unknown=hooks.unknown,
            missing=hooks.missing,
            catch_up=hooks.catch_up,
            catching_up=hooks.catching_up,
            MissingTimestamp=MissingTimestamp,
            KV=KV,
            new_tuple=tuple.__new__,
            CONTROL=CONTROL_MESSAGE_TYPES,
            Watermark=WatermarkMessage,
        )
        source.add(1, "runtime.collector = collector")
        source.add(1, "runtime.coordinator = coordinator")
        source.add(1, "if catching_up:")
        source.add(2, "catch_up()")
        source.add(1, "ssp = envelope.ssp")
        source.add(1, "m = envelope.message")
        source.add(1, "try:")
        keyword = "if"
        for op, ssps in inputs:
            if not ssps:
                continue
            if len(ssps) == 1:
                source.add(2, f"{keyword} ssp is {source.name(next(iter(ssps)), 'ssp')}:")
            else:
                source.add(2, f"{keyword} ssp in {source.name(ssps, 'ssps')}:")
            keyword = "elif"
            self._input(source, op, 3)
        if keyword == "if":
            source.add(2, "unknown(envelope)")
        else:
            source.add(2, "else:")
            source.add(3, "unknown(envelope)")
        source.add(1, "except MissingTimestamp as exc:")
        source.add(2, "missing(exc, envelope)")
        process: Process = source.function("process")
        return process

    def _input(self, source: _Source, op: InputImpl, depth: int) -> None:
        """The lines of one input stream's envelope (its message in ``m``)."""
        if op.intermediate:
            source.add(depth, "if type(m) in CONTROL:")
        else:
            source.add(depth, "if type(m) is Watermark:")
        source.add(depth + 1, "on_control(envelope)")
        source.add(depth + 1, "return")
        source.add(depth, "ts = envelope.timestamp")
        if op.intermediate:
            source.add(depth, "m = new_tuple(KV, (envelope.key, m))")
        before = len(source.lines)
        self._downstream(source, op, "m", depth)
        if len(source.lines) == before:
            source.add(depth, "pass")

    def _downstream(self, source: _Source, op: OperatorImpl, var: str, depth: int) -> None:
        """Lines handing ``var`` (``op``'s result) to each of ``op``'s downstream operators."""
        for down, index in op.next:
            if len(down.prev) == 1 and depth < MAX_DEPTH:
                if down.inlinable:
                    self._inline(source, down, var, depth)
                    continue
                taken = down.inline_entry(index, var, source.fresh())
                if taken is not None:
                    self._add(source, taken, depth)
                    continue
            source.add(depth, f"{source.name(self.entry(down, index), 'entry')}({var}, ts)")

    def _add(self, source: _Source, inline: Inline, depth: int) -> None:
        for name, value in inline.names.items():
            source.names[name] = value
        for line in inline.lines:
            source.add(depth, line)

    def _inline(self, source: _Source, op: OperatorImpl, var: str, depth: int) -> None:
        inline = op.inline(var, source.fresh(), source.fresh())
        assert inline is not None
        self._add(source, inline, depth)
        inner = depth + 1 if inline.opens else depth
        before = len(source.lines)
        if inline.output is not None:
            self._downstream(source, op, inline.output, inner)
        if inline.opens and len(source.lines) == before:
            source.add(inner, "pass")


__all__ = ["MAX_DEPTH", "ChainCompiler", "Inline", "Process", "ProcessHooks", "stop_catching_up"]
