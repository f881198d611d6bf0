"""Compiling a task's chains of operators into a few Python functions.

A message costs a Python call per operator when each operator calls the next. The stateless operators
(map, filter, flat_map, a merge of one stream, send_to, sink, partition_by) instead give a few lines of
source (:class:`Inline`); an operator that keeps state (window, join) or has several inputs is a call
boundary with an entry of its own. For each input stream the compiler writes one *route* function
(control messages aside, the envelope's message through every inlined operator up to the call
boundaries), and for each call-boundary operator the *emit* function its results go through. So a user
message on a source partition costs one dict lookup of its route, the route, and the user's functions.

Compiled code objects are cached by their source: the tasks of a job share them; only the names they
are bound to (the user's functions, streams, downstream entries) are each task's own.
"""

from __future__ import annotations

import itertools
import linecache
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from samza_nb.control.messages import CONTROL_MESSAGE_TYPES, WatermarkMessage
from samza_nb.operators.impl.base import Emit, OperatorImpl
from samza_nb.operators.values import KV

if TYPE_CHECKING:
    from samza_nb.operators.impl.streams import InputImpl, Route

MAX_DEPTH: Final = 12
"""The deepest block nesting (filters, flat_maps) inlined into one function; Python allows 20. Deeper
operators get an entry function of their own."""

_CODE: dict[str, Any] = {}
_CODE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Inline:
    """An operator's source lines for input variable ``var``: statements at the current indentation;
    ``opens`` when the last one opens a block (``if``/``for``) the rest goes into; ``output`` the variable
    holding the operator's result (None: nothing goes downstream); ``names`` what the lines refer to."""

    lines: tuple[str, ...]
    names: Mapping[str, Any] = field(default_factory=dict)
    opens: bool = False
    output: str | None = None


def _compile(name: str, source: str, names: dict[str, Any]) -> Any:
    """The function ``name`` that ``source`` defines, run with ``names`` as its globals. Its source is
    registered with :mod:`linecache`, so tracebacks through it show the generated lines."""
    with _CODE_LOCK:
        code = _CODE.get(source)
        if code is None:
            filename = f"<operators {name} {len(_CODE) + 1}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            code = _CODE[source] = compile(source, filename, "exec")
    namespace = dict(names)
    exec(code, namespace)
    return namespace[name]


class _Source:
    """The lines and names of one function being written."""

    def __init__(self, header: str) -> None:
        self.lines = [header]
        self.names: dict[str, Any] = {}
        self._ids = itertools.count()

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
        return _compile(name, "\n".join(self.lines), self.names)


class ChainCompiler:
    """Writes the route of each input operator, the emit function of each call-boundary operator and
    the entries of operators reached from several places (see the module docstring)."""

    def __init__(self, runtime: Any) -> None:
        self._runtime = runtime
        self._entries: dict[tuple[int, int], Emit] = {}

    def bind(self, operators: list[OperatorImpl]) -> None:
        """Give every call-boundary operator of ``operators`` (upstream first) its emit function."""
        for op in reversed(operators):
            if not op.inlinable and op.prev:
                op.emit = self._emitter(op)

    def _emitter(self, op: OperatorImpl) -> Emit:
        source = _Source("def emit(m, ts):")
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
                source = _Source("def entry(m, ts):")
                self._inline(source, op, "m", 1)
                if len(source.lines) == 1:
                    source.add(1, "pass")
                found = source.function("entry")
            else:
                found = op.entry(index)
            self._entries[key] = found
        return found

    def route(self, op: InputImpl, on_control: Route) -> Route:
        """The function taking each envelope of the stream of input operator ``op``: control messages go
        to ``on_control`` (on a source stream only watermarks can arrive in-band); user messages (from an
        intermediate stream as ``KV(envelope key, message)``) go downstream with the envelope's time."""
        source = _Source("def route(envelope):")
        source.names.update(on_control=on_control, KV=KV, new_tuple=tuple.__new__)
        source.add(1, "m = envelope.message")
        if op.intermediate:
            source.names["CONTROL"] = CONTROL_MESSAGE_TYPES
            source.add(1, "if type(m) in CONTROL:")
        else:
            source.names["Watermark"] = WatermarkMessage
            source.add(1, "if type(m) is Watermark:")
        source.add(2, "on_control(envelope)")
        source.add(2, "return")
        source.add(1, "ts = envelope.timestamp")
        if op.intermediate:
            source.add(1, "m = new_tuple(KV, (envelope.key, m))")
        self._downstream(source, op, "m", 1)
        route: Route = source.function("route")
        return route

    def _downstream(self, source: _Source, op: OperatorImpl, var: str, depth: int) -> None:
        """Lines handing ``var`` (``op``'s result) to each of ``op``'s downstream operators."""
        for down, index in op.next:
            if down.inlinable and len(down.prev) == 1 and depth < MAX_DEPTH:
                self._inline(source, down, var, depth)
            else:
                source.add(depth, f"{source.name(self.entry(down, index), 'entry')}({var}, ts)")

    def _inline(self, source: _Source, op: OperatorImpl, var: str, depth: int) -> None:
        inline = op.inline(var, source.fresh(), source.fresh())
        assert inline is not None
        for name, value in inline.names.items():
            source.names[name] = value
        for line in inline.lines:
            source.add(depth, line)
        inner = depth + 1 if inline.opens else depth
        before = len(source.lines)
        if inline.output is not None:
            self._downstream(source, op, inline.output, inner)
        if inline.opens and len(source.lines) == before:
            source.add(inner, "pass")


__all__ = ["MAX_DEPTH", "ChainCompiler", "Inline"]
