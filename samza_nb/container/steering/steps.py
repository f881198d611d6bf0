"""One step of a paused job: the record of a message processed on request (:class:`Step`), what was captured
while it ran (the output it sent, the store writes it made) and why the chooser picked it.

Capture costs nothing outside steps: for the duration of one step, :class:`StepCapture` puts a recording
collector in the task instance's place and records the writes of the task's stores by shadowing their
``put``/``put_all``/``delete``/``delete_all`` with recording versions on the store objects themselves
(instance attributes, removed when the step ends). A store object that cannot take instance attributes
(``__slots__`` without ``__dict__``) is not recorded (logged once); a task that bound ``store.put`` to a
variable of its own before the step writes past the recording too. Each write is recorded with copies of
its old and new values as they were when it was made (:func:`~samza_nb.storage.values.copy_value`): a task
that changes an object after putting it does not change what the step shows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import OutgoingMessageEnvelope
from samza_nb.chooser.base import TracedChooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.time_aligned import TimeAlignedChooser
from samza_nb.chooser.trace import ChoiceTrace, chooser_layers, describe_choice
from samza_nb.storage.values import copy_value

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
    from samza_nb.api.task import MessageCollector
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.container.loop.task_instance import TaskInstance

log = logging.getLogger(__name__)

Write = tuple[str, Any, Any, Any]
"""A store write: ``(store, key, old value, new value)``; None for an absent value (a delete's new)."""


@dataclass(frozen=True)
class NextMessage:
    """The message a paused job processes next (``peek``): its task, partition, offset, key and message,
    and why the chooser picked it (``reason``). The chooser's decision is made when it is peeked and holds:
    the next step or the resume processes this message first."""

    task: str
    ssp: SystemStreamPartition
    offset: str
    key: Any
    message: Any
    reason: str


@dataclass(frozen=True)
class Step(NextMessage):
    """One message a paused job processed on request (``step``): its task, partition, offset, key and
    message, why the chooser picked it (``reason``), the envelopes the task sent while processing it
    (``outputs``) and every store write it made (``writes``: ``(store, key, old, new)``, in order)."""

    outputs: tuple[OutgoingMessageEnvelope, ...] = ()
    writes: tuple[Write, ...] = ()


class Steps(list[Step]):
    """What ``step(n)`` returns: the steps taken, in order. Shorter than ``requested`` when the step ended
    early, and then :attr:`stopped_early` says why ("end of stream", "timeout", "the job stopped")."""

    def __init__(self, requested: int, steps: Iterable[Step] = (), stopped_early: str | None = None) -> None:
        super().__init__(steps)
        self.requested = requested
        self.stopped_early = stopped_early


class _Recorder:
    """Collects a step's outputs and writes (tasks on threads write from them: a lock keeps order)."""

    def __init__(self) -> None:
        self.outputs: list[OutgoingMessageEnvelope] = []
        self.writes: list[Write] = []
        self.lock = threading.Lock()
        self.depth = threading.local()  # a layer's put_all calling its own put records once


class CapturingCollector:
    """The collector of a task during a step: records each envelope, then sends it with the real one."""

    __slots__ = ("_recorder", "real")

    def __init__(self, real: MessageCollector, recorder: _Recorder) -> None:
        self.real = real
        self._recorder = recorder

    def send(self, envelope: OutgoingMessageEnvelope) -> None:
        """Record ``envelope`` and send it."""
        self.real.send(envelope)
        with self._recorder.lock:
            self._recorder.outputs.append(envelope)

    def send_to(self, stream: SystemStream, message: Any, key: Any = None) -> None:
        """Send ``message`` to ``stream`` with the real collector, and record it as its envelope."""
        self.real.send_to(stream, message, key)
        with self._recorder.lock:
            self._recorder.outputs.append(OutgoingMessageEnvelope(stream, message, key=key))


_WRITES = ("put", "put_all", "delete", "delete_all")
_untappable: set[type] = set()


def _tap(name: str, store: Any, recorder: _Recorder) -> bool:
    """Shadow the store's write methods with recording ones; False when the object refuses attributes."""
    originals = {method: getattr(store, method) for method in _WRITES}
    get: Callable[[Any], Any] = store.get
    depth = recorder.depth

    def recording(method: str, pairs: Callable[..., list[tuple[Any, Any]]]) -> Callable[..., None]:
        original = originals[method]

        def write(*args: Any) -> None:
            if getattr(depth, "n", 0):
                original(*args)  # a write made by the outer recorded call (put_all -> put)
                return
            if method.endswith("_all") and len(args) == 1 and args[0] is not None:
                args = (list(args[0]),)  # read twice: here and by the store
            try:
                entries = pairs(*args)
            except Exception:  # bad arguments: the store's own call reports them
                entries = []
            olds: dict[Any, Any] = {}
            records: list[Write] = []
            for key, value in entries:
                new = _as_now(value)  # the task may change its object after the write
                try:
                    old = olds[key] if key in olds else _as_now(get(key))
                except Exception:  # an unhashable or None key: the write itself reports it
                    old = None
                olds[key] = new
                records.append((name, key, old, new))
            depth.n = 1
            try:
                original(*args)
            finally:
                depth.n = 0
            with recorder.lock:
                recorder.writes.extend(records)

        return write

    def put_pairs(key: Any, value: Any) -> list[tuple[Any, Any]]:
        return [(key, value)]

    def put_all_pairs(entries: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
        return list(entries)

    def delete_pairs(key: Any) -> list[tuple[Any, Any]]:
        return [(key, None)]

    def delete_all_pairs(keys: Iterable[Any]) -> list[tuple[Any, Any]]:
        return [(key, None) for key in keys]

    wrappers = {
        "put": recording("put", put_pairs),
        "put_all": recording("put_all", put_all_pairs),
        "delete": recording("delete", delete_pairs),
        "delete_all": recording("delete_all", delete_all_pairs),
    }
    try:
        for method, wrapper in wrappers.items():
            setattr(store, method, wrapper)
    except (AttributeError, TypeError):
        _untap(store)
        if type(store) not in _untappable:
            _untappable.add(type(store))
            log.warning(
                "steps do not record the writes of store %r (%s takes no attributes)", name, type(store)
            )
        return False
    return True


def _as_now(value: Any) -> Any:
    """A copy of ``value`` as it is now, for the record; ``value`` itself when it cannot be copied (the
    write itself then reports it, or the store keeps that object)."""
    try:
        return copy_value(value)
    except Exception:
        return value


def _untap(store: Any) -> None:
    for method in _WRITES:
        if method in getattr(store, "__dict__", {}):
            delattr(store, method)


class StepCapture:
    """Records one task instance's output and store writes while a step runs (:meth:`start`/:meth:`stop`)."""

    def __init__(self, ti: TaskInstance, stores: Mapping[str, Any]) -> None:
        self._ti = ti
        self._stores = stores
        self._recorder = _Recorder()
        self._real: MessageCollector | None = None
        self._tapped: list[Any] = []

    def start(self) -> None:
        """From now on the task's sends and writes are recorded."""
        ti = self._ti
        self._real = ti.collector
        ti.collector = CapturingCollector(ti.collector, self._recorder)
        for name, store in self._stores.items():
            if _tap(name, store, self._recorder):
                self._tapped.append(store)

    def stop(self) -> None:
        """Recording ends: the task sends with its own collector and its stores write as before."""
        if self._real is not None:
            self._ti.collector = self._real
            self._real = None
        for store in self._tapped:
            _untap(store)
        self._tapped.clear()

    @property
    def outputs(self) -> tuple[OutgoingMessageEnvelope, ...]:
        """The envelopes sent so far, in order."""
        with self._recorder.lock:
            return tuple(self._recorder.outputs)

    @property
    def writes(self) -> tuple[Write, ...]:
        """The store writes made so far, in order."""
        with self._recorder.lock:
            return tuple(self._recorder.writes)


# -- why the chooser picked an envelope ---------------------------------------------------------------------
def choice_reason(chooser: MessageChooser, envelope: IncomingMessageEnvelope) -> str:
    """Why ``chooser`` just chose ``envelope``, in words: the traced decision when the chooser traces
    (candidates included), else an account read from its layers (policy, tier, batch, bootstrapping)."""
    trace = chooser.last_choice if isinstance(chooser, TracedChooser) else None
    if trace is None or trace.ssp != envelope.ssp or trace.offset != envelope.offset:
        trace = describe_choice(chooser, envelope)
    return reason_text(trace, _policy(chooser))


def reason_text(trace: ChoiceTrace, policy: str) -> str:
    """A decision in words, e.g. ``"round robin; priority tier 1; batch continues (3 of 10)"``."""
    parts = [policy]
    if trace.gated_by_bootstrap:
        lagging = ", ".join(str(stream) for stream in trace.lagging_streams)
        parts.append(f"bootstrapping ({lagging} not caught up)" if lagging else "bootstrapping")
    if trace.tier is not None:
        parts.append(f"priority tier {trace.tier}")
    if trace.batch_size is not None:
        position = trace.batch_position or 1
        if position > 1:
            parts.append(f"batch continues ({position} of {trace.batch_size})")
        else:
            parts.append(f"starts a batch (up to {trace.batch_size})")
    if trace.candidates:
        others = [f"{ssp} (tier {tier})" if tier is not None else str(ssp) for ssp, tier in trace.candidates]
        parts.append(f"candidates: {', '.join(others)}")
    return "; ".join(parts)


def _policy(chooser: MessageChooser) -> str:
    """The innermost policy of a composition, in words."""
    node = chooser_layers(chooser).policy
    if isinstance(node, RoundRobinChooser):
        return "round robin (next in turn)"
    if isinstance(node, TimeAlignedChooser):
        return "time-aligned (earliest event time)"
    return f"chosen by {type(node).__name__}" if node is not None else "chosen by priority"
