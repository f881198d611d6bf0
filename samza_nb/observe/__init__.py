"""Observation: the event bus the container publishes to, and its events."""

from samza_nb.observe.bus import EventBus, Subscriber
from samza_nb.observe.events import (
    ChooserDecision,
    Committed,
    ContainerStarted,
    ContainerStopped,
    EndOfStreamReached,
    Event,
    ProcessCompleted,
    ProcessStarted,
    StoreRestoreProgress,
    TaskFailed,
    WindowFired,
)

__all__ = [
    "ChooserDecision",
    "Committed",
    "ContainerStarted",
    "ContainerStopped",
    "EndOfStreamReached",
    "Event",
    "EventBus",
    "ProcessCompleted",
    "ProcessStarted",
    "StoreRestoreProgress",
    "Subscriber",
    "TaskFailed",
    "WindowFired",
]
