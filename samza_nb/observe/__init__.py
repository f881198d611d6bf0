"""Observation: the event bus the container publishes to, its events, and the states and outcomes runs
are described with."""

from samza_nb.observe.bus import EventBus, Subscriber
from samza_nb.observe.events import (
    ChooserDecision,
    Committed,
    ContainerStarted,
    ContainerStopped,
    EndOfStreamProgress,
    EndOfStreamReached,
    Event,
    MessageSent,
    MessageTaken,
    ProcessCompleted,
    ProcessStarted,
    StoreRestoreProgress,
    TaskFailed,
    WatermarkAdvanced,
    WindowFired,
)
from samza_nb.observe.states import ContainerState, RunOutcome

__all__ = [
    "ChooserDecision",
    "Committed",
    "ContainerStarted",
    "ContainerState",
    "ContainerStopped",
    "EndOfStreamProgress",
    "EndOfStreamReached",
    "Event",
    "EventBus",
    "MessageSent",
    "MessageTaken",
    "ProcessCompleted",
    "ProcessStarted",
    "RunOutcome",
    "StoreRestoreProgress",
    "Subscriber",
    "TaskFailed",
    "WatermarkAdvanced",
    "WindowFired",
]
