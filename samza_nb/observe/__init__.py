"""Observation: the event bus the container publishes to, and its events."""

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

__all__ = [
    "ChooserDecision",
    "Committed",
    "ContainerStarted",
    "ContainerStopped",
    "EndOfStreamProgress",
    "EndOfStreamReached",
    "Event",
    "EventBus",
    "MessageSent",
    "MessageTaken",
    "ProcessCompleted",
    "ProcessStarted",
    "StoreRestoreProgress",
    "Subscriber",
    "TaskFailed",
    "WatermarkAdvanced",
    "WindowFired",
]
