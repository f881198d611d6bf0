"""Loop modes: the ways a container's run loop can execute a task, as values a test runs in.

A task should give the same outputs and checkpoints however the loop runs it; :data:`LOOP_MODES` lists one
mode per execution path, for a test to run in each::

    @pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
    def test_counts(mode):
        result = TestRunner.of(WordCount, mode=mode).add_input("lines", ["a b a"]).run()
        ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.observe.bus import EventBus
from samza_nb.observe.events import Event

THREAD_POOL_SIZE_KEY = "job.container.thread.pool.size"
MAX_CONCURRENCY_KEY = "task.max.concurrency"


def _ignore(event: Event) -> None:
    """The observed mode's subscriber: it asks for every event and keeps none."""


@dataclass(frozen=True)
class LoopMode:
    """One way the run loop executes a task: what a container built in this mode gets.

    - ``observed``: a subscriber of every observe event, so each message takes the general path with its
      per-message events (ChooserDecision, ProcessStarted, ProcessCompleted) instead of the inline one;
    - ``thread_pool_size``: ``job.container.thread.pool.size`` (0: sync tasks run on the loop's thread);
    - ``max_concurrency``: ``task.max.concurrency`` (messages in flight per task).

    A mode sets defaults only: a key the test configures itself wins. ``str(mode)`` is its name (for
    pytest ids). Applications refuse ``task.max.concurrency`` above 1: :attr:`for_applications` says
    whether a mode can run one.
    """

    name: str
    observed: bool = False
    thread_pool_size: int = 0
    max_concurrency: int = 1

    def __post_init__(self) -> None:
        if not self.name:
            raise SamzaError("LoopMode: name must not be empty")
        if self.thread_pool_size < 0:
            raise SamzaError(
                f"LoopMode {self.name!r}: thread_pool_size={self.thread_pool_size}, must be >= 0"
            )
        if self.max_concurrency < 1:
            raise SamzaError(f"LoopMode {self.name!r}: max_concurrency={self.max_concurrency}, must be >= 1")

    def __str__(self) -> str:
        return self.name

    @property
    def for_applications(self) -> bool:
        """Whether a StreamApplication can run in this mode (its operator tasks take one message at a
        time: ``task.max.concurrency`` must be 1)."""
        return self.max_concurrency == 1

    def config(self) -> dict[str, str]:
        """The config keys this mode sets (none for the inline and observed modes)."""
        keys: dict[str, str] = {}
        if self.thread_pool_size:
            keys[THREAD_POOL_SIZE_KEY] = str(self.thread_pool_size)
        if self.max_concurrency != 1:
            keys[MAX_CONCURRENCY_KEY] = str(self.max_concurrency)
        return keys

    def apply(self, config: Mapping[str, Any]) -> Config:
        """``config`` with this mode's keys added where it sets none of them itself."""
        return Config({**self.config(), **dict(config)})

    def observe(self, bus: EventBus) -> None:
        """Subscribe to every event on ``bus`` when this mode is observed (so the container publishes the
        per-message ones); nothing otherwise."""
        if self.observed:
            bus.subscribe(_ignore)


INLINE = LoopMode("inline")
"""A sync task at concurrency 1 on the loop's thread, nobody observing per message: the inline path."""

OBSERVED = LoopMode("observed", observed=True)
"""A subscriber of every event: each message goes the general path and publishes its events."""

THREAD_POOL = LoopMode("thread_pool", thread_pool_size=2)
"""Sync tasks on a pool of 2 threads (each call completes a callback on the loop)."""

CONCURRENCY_3 = LoopMode("concurrency_3", max_concurrency=3)
"""``task.max.concurrency`` 3: inline calls on the general path, up to 3 messages in flight per task."""

LOOP_MODES: tuple[LoopMode, ...] = (INLINE, OBSERVED, THREAD_POOL, CONCURRENCY_3)
"""One mode per execution path of the run loop:
``@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)`` runs a test in each."""


def loop_mode(mode: LoopMode | str) -> LoopMode:
    """``mode`` itself, or the mode of :data:`LOOP_MODES` named ``mode``; an unknown name is a SamzaError
    naming it and the known ones."""
    if isinstance(mode, LoopMode):
        return mode
    for known in LOOP_MODES:
        if known.name == mode:
            return known
    names = ", ".join(m.name for m in LOOP_MODES)
    raise SamzaError(f"unknown loop mode {mode!r}: the modes are {names} (or a LoopMode of your own)")


__all__ = ["CONCURRENCY_3", "INLINE", "LOOP_MODES", "OBSERVED", "THREAD_POOL", "LoopMode", "loop_mode"]
