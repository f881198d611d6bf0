"""The base of every operator implementation: message entry points, watermark and end-of-stream
propagation (Samza's OperatorImpl), and what the operators of one task share.

Messages flow as calls ``entry(message, timestamp)``: stateless operators are inlined into compiled
functions (see :mod:`.compile`); the others (windows, joins) have an entry that hands results to
``emit``, bound once when the task builds its graph. Watermarks flow separately: an operator's input
watermark is the minimum of its upstream operators' output watermarks; when that advances, the operator
handles it (a window fires its due panes) and then its output watermark advances to the same value and
its downstream operators are told. Watermarks never go back and are passed on only when they advance.
End-of-stream reaches an operator once every upstream operator has ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from samza_nb.control.messages import WATERMARK_NOT_EXIST
from samza_nb.errors import SamzaError
from samza_nb.operators.graph import OperatorSpec

if TYPE_CHECKING:
    from samza_nb.api.task import MessageCollector, TaskContext, TaskCoordinator
    from samza_nb.observe.events import Event
    from samza_nb.operators.impl.compile import Inline

Emit = Callable[[Any, "int | None"], None]
"""An operator's message entry: ``entry(message, timestamp_ms_or_None)``."""

WATERMARK_MAX: Final = 2**63 - 1
"""The watermark of an input this task holds no partition of: it will never hold anything back."""


class MissingTimestamp(SamzaError):
    """An event-time operator got a message without an event time (the operator task adds the partition
    and offset of the message that carried it)."""

    def __init__(self, op_id: str, what: str) -> None:
        super().__init__(
            f"{what} {op_id!r} works on event time but got a message without a timestamp: give the input "
            "messages a timestamp (or the window a timestamp_fn)"
        )
        self.op_id = op_id


class OpRuntime:
    """What the operators of one task share: the collector and coordinator of the call in progress (the
    operator task sets them before it calls into the graph), the task's name, clock, event bus, stores
    and per-operator metrics (``context.metrics["operators"][op_id]``)."""

    __slots__ = ("collector", "context", "coordinator", "now_ms", "publish", "task_name")

    def __init__(self, context: TaskContext) -> None:
        self.context = context
        self.task_name = context.task_name
        self.now_ms: Callable[[], float] = context.now_ms
        self.publish: Callable[[Event], None] = context.publish
        self.collector: MessageCollector | None = None
        self.coordinator: TaskCoordinator | None = None

    def op_metrics(self, op_id: str, **counters: int) -> dict[str, int]:
        """The metrics dict of ``op_id`` (created with ``counters`` as initial values)."""
        operators: dict[str, dict[str, int]] = self.context.metrics.setdefault("operators", {})
        metrics = operators.setdefault(op_id, {})
        for name, value in counters.items():
            metrics.setdefault(name, value)
        return metrics

    def now(self) -> int:
        """The container clock's time, in whole ms."""
        return int(self.now_ms())


def _drop(message: Any, timestamp: int | None) -> None:
    """Nothing downstream."""


class OperatorImpl:
    """One operator of a task's graph. Subclasses implement :meth:`entry` (and, when they keep state or
    react to time, :meth:`init`, :meth:`handle_watermark`, :meth:`handle_end_of_stream`, :meth:`on_timer`).
    ``emit`` hands a result to every downstream operator; it is bound before any entry is made."""

    def __init__(self, spec: OperatorSpec, runtime: OpRuntime) -> None:
        self.spec = spec
        self.op_id = spec.op_id
        self.runtime = runtime
        self.prev: list[OperatorImpl] = []
        self.next: list[tuple[OperatorImpl, int]] = []  # downstream operator, the input index there
        self.input_watermark: int = WATERMARK_NOT_EXIST
        self.output_watermark: int = WATERMARK_NOT_EXIST
        self.ended = False
        self.emit: Emit = _drop

    def connect(self, downstream: OperatorImpl, index: int) -> None:
        """Send this operator's results to input ``index`` of ``downstream``."""
        self.next.append((downstream, index))
        downstream.prev.append(self)

    # -- messages --------------------------------------------------------------------------------------
    @property
    def inlinable(self) -> bool:
        """True when :meth:`inline` gives this operator's source lines (a stateless operator)."""
        return False

    def inline(self, var: str, out: str, prefix: str) -> Inline | None:
        """This operator's lines for a message in variable ``var`` (its result in ``out``; its global
        names start with ``prefix``), or None when it is called through :meth:`entry` instead."""
        return None

    def inline_entry(self, index: int, var: str, prefix: str) -> Inline | None:
        """Lines taking the message in variable ``var`` (its timestamp in ``ts``) into input ``index`` of
        this call-boundary operator, in place of a call of its :meth:`entry` (local and global names
        start with ``prefix``); None when it is called through its entry. Only for an operator reached
        from one place: the compiler writes the lines once."""
        return None

    def entry(self, index: int) -> Emit:
        """The callable that takes messages on input ``index`` (0 but for the other side of a join) of
        an operator that is not inlined."""
        raise NotImplementedError(f"{type(self).__name__} has no entry: it is inlined")

    def init(self) -> None:
        """Open state (the task's context is ``runtime.context``); called once, before :attr:`emit` is
        bound and any entry is made (so nothing may be emitted here)."""

    # -- watermarks ------------------------------------------------------------------------------------
    def advance(self) -> None:
        """An upstream output watermark advanced: take the new minimum as input watermark if it is
        higher, handle it, and pass it on."""
        watermark = min(p.output_watermark for p in self.prev)
        if watermark > self.input_watermark:
            self.input_watermark = watermark
            self.handle_watermark(watermark)
            self.set_output_watermark(watermark)

    def set_output_watermark(self, watermark: int) -> None:
        """Advance the output watermark to ``watermark`` (never back) and tell the downstream operators."""
        if watermark > self.output_watermark:
            self.output_watermark = watermark
            for downstream, _ in self.next:
                downstream.advance()

    def handle_watermark(self, watermark: int) -> None:
        """The input watermark advanced to ``watermark``; results go out through :attr:`emit` before the
        watermark is passed on."""

    # -- end of stream ---------------------------------------------------------------------------------
    def prev_ended(self) -> None:
        """An upstream operator ended: once all have, handle end-of-stream and pass it on (once)."""
        if self.ended or not all(p.ended for p in self.prev):
            return
        self.ended = True
        self.handle_end_of_stream()
        for downstream, _ in self.next:
            downstream.prev_ended()

    def handle_end_of_stream(self) -> None:
        """Every input ended; results still go out through :attr:`emit`."""

    # -- timers and lifecycle --------------------------------------------------------------------------
    @property
    def has_timer(self) -> bool:
        """True when :meth:`on_timer` does something (the task's window timer calls it)."""
        return False

    def on_timer(self, now_ms: int) -> None:
        """The task's window timer fired at ``now_ms`` (processing time)."""

    def close(self) -> None:
        """The task is closing."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.op_id!r})"


__all__ = ["WATERMARK_MAX", "Emit", "MissingTimestamp", "OpRuntime", "OperatorImpl"]
