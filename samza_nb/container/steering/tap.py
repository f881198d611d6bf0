"""What a step captures (:class:`StepCapture`): the envelopes its task sent and the writes of its stores.

Capture costs nothing outside steps but one call per store write. Every store a task is given is wrapped
in a :class:`StoreTap`, the outermost layer of the store (its reads go straight to the layer below; its
writes pass through). For the duration of one step :class:`StepCapture` makes the task instance send with a
recording collector (:meth:`TaskInstance.use_collector`) and the task's taps record (:meth:`StoreTap.record`).
Nothing is patched: a task that bound ``store.put`` to a variable of its own is recorded too. Each write is
recorded with copies of its old and new values as they were when it was made
(:func:`~samza_nb.storage.values.copy_value`): a task that changes an object after putting it, or changes
the object it read before putting it back, does not change what the step shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import OutgoingMessageEnvelope
from samza_nb.storage.values import copy_value

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStream
    from samza_nb.api.task import MessageCollector
    from samza_nb.container.loop.task_instance import TaskInstance

Write = tuple[str, Any, Any, Any]
"""A store write: ``(store, key, old value, new value)``; None for an absent value (a delete's new)."""


class _Recorder:
    """Collects a step's outputs and writes (tasks on threads write from them: a lock keeps order)."""

    def __init__(self) -> None:
        self.outputs: list[OutgoingMessageEnvelope] = []
        self.writes: list[Write] = []
        self.lock = threading.Lock()

    def wrote(self, name: str, get: Callable[[Any], Any], entries: list[tuple[Any, Any]], write: Any) -> None:
        """Make ``write()`` (a write of ``entries``, ``(key, new value)`` pairs, to the store ``name``
        whose layer below reads with ``get``) and record it with the values as they are now."""
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
        write()
        with self.lock:
            self.writes.extend(records)


class StoreTap:
    """The outermost layer of a task's store: every call goes to ``inner``; while a step records
    (:meth:`record` to :meth:`stop`) each write is recorded too. Other methods of ``inner`` (a custom
    store's) are reached through it unchanged."""

    __slots__ = (
        "_inner",
        "_name",
        "_recorder",
        "all",
        "close",
        "flush",
        "get",
        "get_all",
        "range",
        "snapshot",
    )

    def __init__(self, name: str, inner: Any) -> None:
        self._inner = inner
        self._name = name
        self._recorder: _Recorder | None = None
        # Reads and the rest go straight to the layer below (no call of this layer's own).
        self.get = inner.get
        self.get_all = inner.get_all
        self.range = inner.range
        self.all = inner.all
        self.snapshot = inner.snapshot
        self.flush = inner.flush
        self.close = inner.close

    @property
    def inner(self) -> Any:
        """The store below."""
        return self._inner

    def record(self, recorder: _Recorder) -> None:
        """From now on writes are recorded into ``recorder``."""
        self._recorder = recorder

    def stop(self) -> None:
        """Writes are no longer recorded."""
        self._recorder = None

    def put(self, key: Any, value: Any) -> None:
        """Write ``value`` under ``key`` (recorded during a step)."""
        recorder = self._recorder
        if recorder is None:
            self._inner.put(key, value)
        else:
            recorder.wrote(self._name, self._inner.get, [(key, value)], lambda: self._inner.put(key, value))

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        """Write every ``(key, value)`` of ``entries`` (recorded during a step)."""
        recorder = self._recorder
        if recorder is None:
            self._inner.put_all(entries)
            return
        listed = _pairs(entries)
        pairs = listed if isinstance(listed, list) else []
        recorder.wrote(self._name, self._inner.get, pairs, lambda: self._inner.put_all(listed))

    def delete(self, key: Any) -> None:
        """Delete ``key`` (recorded during a step)."""
        recorder = self._recorder
        if recorder is None:
            self._inner.delete(key)
        else:
            recorder.wrote(self._name, self._inner.get, [(key, None)], lambda: self._inner.delete(key))

    def delete_all(self, keys: Iterable[Any]) -> None:
        """Delete every key of ``keys`` (recorded during a step)."""
        recorder = self._recorder
        if recorder is None:
            self._inner.delete_all(keys)
            return
        listed = _pairs(keys)
        entries = [(key, None) for key in listed] if isinstance(listed, list) else []
        recorder.wrote(self._name, self._inner.get, entries, lambda: self._inner.delete_all(listed))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._inner)

    def __repr__(self) -> str:
        return repr(self._inner)


def _pairs(entries: Any) -> Any:
    """``entries`` read once into a list (the record and the store both read it); as they are when they
    are not iterable (the store's own call reports them)."""
    if isinstance(entries, (str, bytes)):
        return entries
    try:
        return list(entries)
    except TypeError:
        return entries


def taps_over(stores: Mapping[str, Any]) -> dict[str, StoreTap]:
    """A :class:`StoreTap` over each of a task's stores, by name."""
    return {name: StoreTap(name, store) for name, store in stores.items()}


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


def _as_now(value: Any) -> Any:
    """A copy of ``value`` as it is now, for the record; ``value`` itself when it cannot be copied (the
    write itself then reports it, or the store keeps that object)."""
    try:
        return copy_value(value)
    except Exception:
        return value


class StepCapture:
    """Records one task instance's output and store writes while a step runs (:meth:`start`/:meth:`stop`);
    ``taps`` are the task's stores (:func:`taps_over`)."""

    def __init__(self, ti: TaskInstance, taps: Mapping[str, StoreTap]) -> None:
        self._ti = ti
        self._taps = list(taps.values())
        self._recorder = _Recorder()
        self._real: MessageCollector | None = None

    def start(self) -> None:
        """From now on the task's sends and writes are recorded."""
        ti = self._ti
        self._real = ti.collector
        ti.use_collector(CapturingCollector(ti.collector, self._recorder))
        for tap in self._taps:
            tap.record(self._recorder)

    def stop(self) -> None:
        """Recording ends: the task sends with its own collector and its stores write as before."""
        if self._real is not None:
            self._ti.use_collector(self._real)
            self._real = None
        for tap in self._taps:
            tap.stop()

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


__all__ = ["CapturingCollector", "StepCapture", "StoreTap", "Write", "taps_over"]
