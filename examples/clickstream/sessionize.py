"""SessionizeTask: turns each user's clicks into sessions (a gap of more than ``sessionize.gap.ms`` of event
time closes one), keeping the open session per user in a DuckDB store.

A closed session goes to ``sessionize.output`` (default ``spark.sessions``) as
``{"user_id", "country", "start_ms", "end_ms", "clicks", "pages"}`` keyed by user; at end-of-stream every
open session is closed. Clicks of a user arrive in event-time order (the input is partitioned by user and
sorted by timestamp within each partition), and the store commits with the input offsets in one DuckDB
transaction, so a restarted job neither loses nor repeats a click in a session.
"""

from __future__ import annotations

from typing import Any

from samza_nb import (
    EndOfStreamListenerTask,
    IncomingMessageEnvelope,
    InitableTask,
    MessageCollector,
    OutgoingMessageEnvelope,
    StreamTask,
    SystemStream,
    TaskContext,
    TaskCoordinator,
)

DEFAULT_GAP_MS = 30 * 60 * 1000
"""Thirty minutes without a click ends a session."""


class SessionizeTask(StreamTask, InitableTask, EndOfStreamListenerTask):
    """Per-user sessions of clicks (see the module)."""

    def init(self, context: TaskContext) -> None:
        self.open = context.get_store("sessions")
        self.gap_ms = context.config.get_int("sessionize.gap.ms", DEFAULT_GAP_MS)
        self.output = SystemStream.parse(context.config.get_str("sessionize.output", "spark.sessions"))

    def process(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        click: dict[str, Any] = envelope.message
        user = str(click["user_id"])
        at = envelope.timestamp if envelope.timestamp is not None else 0
        session = self.open.get(user)
        if session is not None and at - session["end_ms"] > self.gap_ms:
            self._close(user, session, collector)
            session = None
        if session is None:
            session = {"country": click.get("country"), "start_ms": at, "end_ms": at}
            session.update(clicks=0, pages=[])
        session["end_ms"] = max(session["end_ms"], at)
        session["clicks"] += 1
        if click["page"] not in session["pages"]:
            session["pages"].append(click["page"])
        self.open.put(user, session)

    def on_end_of_stream(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        for user, session in list(self.open.all()):
            self._close(user, session, collector)

    def _close(self, user: str, session: dict[str, Any], collector: MessageCollector) -> None:
        collector.send(
            OutgoingMessageEnvelope(
                self.output,
                {
                    "user_id": user,
                    "country": session["country"],
                    "start_ms": session["start_ms"],
                    "end_ms": session["end_ms"],
                    "clicks": session["clicks"],
                    "pages": len(session["pages"]),
                },
                key=user,
            )
        )
        self.open.delete(user)
