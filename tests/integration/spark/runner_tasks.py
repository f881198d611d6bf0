"""Tasks for the Spark runner's tests: imported by the container processes on Spark's executors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class Record:
    """Appends ``<task> <pid> <offset> <message>`` to the file ``test.record`` for every message. With
    ``test.fail.marker`` set: the first message whose text is ``test.fail.on`` raises while that marker file
    does not exist, and creates it (so the retried attempt passes); with ``test.fail.always`` it raises on
    that message in every attempt."""

    def init(self, context: Any) -> None:
        config = context.config
        self.task = context.task_name.replace(" ", "_")
        self.record = open(config.get_str("test.record"), "a")  # noqa: SIM115 (closed in close())
        self.fail_on = config.get_str("test.fail.on", "")
        self.marker = config.get_str("test.fail.marker", "")
        self.always = config.get_str("test.fail.always", "") == "true"

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message
        if isinstance(message, bytes):
            message = message.decode()
        if self.always and message == self.fail_on:
            raise ValueError(f"cannot process {message!r}")
        if self.marker and message == self.fail_on and not os.path.exists(self.marker):
            Path(self.marker).touch()
            raise ValueError(f"failing once on {message!r}")
        self.record.write(f"{self.task} {os.getpid()} {envelope.offset} {message}\n")
        self.record.flush()

    def close(self) -> None:
        self.record.close()


class Count(Record):
    """Counts messages per text in the store ``counts``; records ``<task> <pid> <offset> <text>=<count>``."""

    def init(self, context: Any) -> None:
        super().init(context)
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message.decode() if isinstance(envelope.message, bytes) else envelope.message
        count = (self.counts.get(message) or 0) + 1
        self.counts.put(message, count)
        self.record.write(f"{self.task} {os.getpid()} {envelope.offset} {message}={count}\n")
        self.record.flush()


class RecordUntilEnd(Record):
    """Records like :class:`Record`; the message ``end`` is not recorded: its task asks to shut down (the
    container ends once every task of it did), so a job over an unbounded input ends by itself."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message.decode() if isinstance(envelope.message, bytes) else envelope.message
        if message == "end":
            from samza_nb.api.task import RequestScope

            coordinator.shutdown(RequestScope.CURRENT_TASK)
            return
        super().process(envelope, collector, coordinator)


class ToSpark(Record):
    """Records each message and sends ``{"line": text, "total": Decimal}`` to the Spark output ``out``; the
    line ``test.fail.on`` gets the total ``Decimal("1234.567")``, which a ``decimal(10,2)`` cannot hold."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        from decimal import Decimal

        from samza_nb import OutgoingMessageEnvelope, SystemStream

        super().process(envelope, collector, coordinator)
        text = envelope.message.decode() if isinstance(envelope.message, bytes) else envelope.message
        total = Decimal("1234.567") if text == self.fail_on else Decimal("1.5")
        collector.send(OutgoingMessageEnvelope(SystemStream("spark", "out"), {"line": text, "total": total}))


class ForwardUntilEnd(RecordUntilEnd):
    """Like :class:`RecordUntilEnd`, and sends each recorded message to the Spark output ``out`` as
    ``{"message": text, "partition": n}`` (exactly once in ``read_output``)."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message.decode() if isinstance(envelope.message, bytes) else envelope.message
        super().process(envelope, collector, coordinator)
        if message != "end":
            from samza_nb import OutgoingMessageEnvelope, SystemStream

            out = {"message": str(message), "partition": envelope.ssp.partition}
            collector.send(OutgoingMessageEnvelope(SystemStream("spark", "out"), out))


class ForwardRows:
    """Sends each row of a Spark input to the Spark output ``out`` as ``{"id": row["id"]}``."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        from samza_nb import OutgoingMessageEnvelope, SystemStream

        collector.send(OutgoingMessageEnvelope(SystemStream("spark", "out"), {"id": envelope.message["id"]}))


class RunningTotal:
    """Per customer, a running total in the store ``totals``; each order ``<customer> <amount>`` of the
    stream ``orders`` is sent to the Spark output ``out`` as ``{"order": n, "customer", "total"}`` (its
    customer's total after it). A line ``<customer>`` of the stream ``customers`` (a table) marks the
    customer known in the store ``known``; an order of an unknown customer has total -1."""

    def init(self, context: Any) -> None:
        self.totals = context.get_store("totals")
        self.known = context.get_store("known")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        from samza_nb import OutgoingMessageEnvelope, SystemStream

        text = envelope.message.decode() if isinstance(envelope.message, bytes) else envelope.message
        if envelope.ssp.stream == "customers":
            self.known.put(text, 1)
            return
        customer, amount = text.split()
        total = -1
        if self.known.get(customer) is not None:
            total = (self.totals.get(customer) or 0) + int(amount)
            self.totals.put(customer, total)
        out = {"order": int(envelope.offset), "customer": customer, "total": total}
        collector.send(OutgoingMessageEnvelope(SystemStream("spark", "out"), out))
