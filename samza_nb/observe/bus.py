"""The observe bus: the container publishes events, subscribers (dashboards, tests, metrics) listen.

With no subscriber, publishing sites check one boolean and build nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from samza_nb.observe.events import Event

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], Any]


class EventBus:
    """Fan-out of events to subscribers, called synchronously on the container's loop thread.

    Subscribers must be quick (a dashboard should buffer and throttle). A subscriber that raises is logged
    and removed, so observation can never fail a job. ``active`` is True while anyone listens; publishers
    check it before building an event.
    """

    __slots__ = ("_subscribers", "active")

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self.active = False

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Start delivering events to ``subscriber``; returns a function that unsubscribes it."""
        self._subscribers = [*self._subscribers, subscriber]
        self.active = True

        def unsubscribe() -> None:
            self._remove(subscriber)

        return unsubscribe

    def _remove(self, subscriber: Subscriber) -> None:
        self._subscribers = [s for s in self._subscribers if s is not subscriber]
        self.active = bool(self._subscribers)

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber, in subscription order."""
        for subscriber in self._subscribers:
            try:
                subscriber(event)
            except Exception:
                log.exception("observe subscriber %r failed; unsubscribing it", subscriber)
                self._remove(subscriber)
