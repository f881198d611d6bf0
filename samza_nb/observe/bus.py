"""The observe bus: the container publishes events, subscribers (dashboards, tests, metrics) listen.

Publishing sites check a boolean before building an event, so with no subscriber observation costs
nothing. Per-message events (chooser decisions, process started/completed) are built only while some
subscriber asked for them: a subscriber of commits alone leaves the per-message path untouched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from typing import Any

from samza_nb.observe.events import (
    ChooserDecision,
    Event,
    MessageSent,
    MessageTaken,
    ProcessCompleted,
    ProcessStarted,
)

log = logging.getLogger(__name__)

Subscriber = Callable[[Event], Any]

PER_MESSAGE_EVENTS: frozenset[type[Event]] = frozenset({ChooserDecision, ProcessStarted, ProcessCompleted})
"""Events published once per message; they slow the container down while anyone listens to them."""

SAMPLED_EVENTS: frozenset[type[Event]] = frozenset({MessageTaken, MessageSent})
"""Events published only as a sample, about one per slice of work, to every subscriber of them (sampled or
not): listening to them costs the container next to nothing."""


class EventBus:
    """Fan-out of events to subscribers, called synchronously on the container's loop thread.

    Subscribers must be quick (a dashboard should buffer and throttle). A subscriber that raises is logged
    and removed, so observation can never fail a job. ``active`` is True while anyone listens;
    ``per_message`` while anyone listens to per-message events; ``sampled`` while anyone wants a sample of
    them; ``messages`` while anyone listens to the sampled messages (:data:`SAMPLED_EVENTS`).
    """

    __slots__ = ("_sampled", "_subscribers", "active", "messages", "per_message", "sampled")

    def __init__(self) -> None:
        self._subscribers: list[tuple[Subscriber, frozenset[type[Event]] | None]] = []
        self._sampled: set[int] = set()
        self.active = False
        self.per_message = False
        self.sampled = False
        self.messages = False

    def subscribe(
        self, subscriber: Subscriber, events: Iterable[type[Event]] | None = None, *, sampled: bool = False
    ) -> Callable[[], None]:
        """Deliver events to ``subscriber`` (only those of the given types, when ``events`` is given);
        returns a function that unsubscribes it.

        ``sampled``: of the per-message events it gets only a sample, about one per slice of work (a few
        ms), which costs the container next to nothing: what a dashboard wants. It gets only the sample
        even while another subscriber gets every per-message event.
        """
        kinds = None if events is None else frozenset(events)
        self._subscribers = [*self._subscribers, (subscriber, kinds)]
        if sampled:
            self._sampled.add(id(subscriber))
        self._refresh()

        def unsubscribe() -> None:
            self._remove(subscriber)

        return unsubscribe

    def _remove(self, subscriber: Subscriber) -> None:
        self._subscribers = [(s, k) for s, k in self._subscribers if s is not subscriber]
        self._sampled.discard(id(subscriber))
        self._refresh()

    def _refresh(self) -> None:
        self.active = bool(self._subscribers)
        wants = [(s, k) for s, k in self._subscribers if k is None or k & PER_MESSAGE_EVENTS]
        self.per_message = any(id(s) not in self._sampled for s, _ in wants)
        self.messages = any(k is None or k & SAMPLED_EVENTS for _, k in self._subscribers)
        self.sampled = bool(wants) or self.messages

    def publish(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber that wants it, in subscription order; a per-message event
        only to the subscribers that did not ask for a sample (they get :meth:`publish_sample`)."""
        kind = type(event)
        sampled = self._sampled if kind in PER_MESSAGE_EVENTS else ()
        for subscriber, kinds in self._subscribers:
            if kinds is not None and kind not in kinds:
                continue
            if sampled and id(subscriber) in sampled:
                continue
            self._deliver(subscriber, event)

    def publish_sample(self, event: Event) -> None:
        """Deliver a sampled per-message ``event`` to the sampled subscribers that want it; a sampled
        message (:data:`SAMPLED_EVENTS`) to every subscriber that wants it."""
        kind = type(event)
        everyone = kind in SAMPLED_EVENTS
        sampled = self._sampled
        for subscriber, kinds in self._subscribers:
            if (everyone or id(subscriber) in sampled) and (kinds is None or kind in kinds):
                self._deliver(subscriber, event)

    def _deliver(self, subscriber: Subscriber, event: Event) -> None:
        try:
            subscriber(event)
        except Exception:
            log.exception("observe subscriber %r failed; unsubscribing it", subscriber)
            self._remove(subscriber)
