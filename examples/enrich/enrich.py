"""EnrichTask: a table from Spark loaded into a store first (a bootstrap stream), then a live Kafka stream
joined against it.

``spark.users`` is a bootstrap stream (``systems.spark.streams.users.samza.bootstrap = true``): the chooser
hands out nothing else until every partition of it has been read to its end, so the ``users`` store holds
the whole table before the first click is processed. Each click from ``kafka.clicks`` leaves as
``{"user_id", "page", "country"}`` on ``enrich.output`` (default ``kafka.enriched-clicks``), keyed by user.
Both inputs are partitioned by user the same way (the Spark table by ``spark.partitions`` with Kafka's
partitioner, the topic by its producers), so task n finds in its store every user of click partition n.
"""

from __future__ import annotations

from typing import Any

from samza_nb import (
    IncomingMessageEnvelope,
    InitableTask,
    MessageCollector,
    OutgoingMessageEnvelope,
    StreamTask,
    SystemStream,
    TaskContext,
    TaskCoordinator,
)

USERS = SystemStream("spark", "users")


class EnrichTask(StreamTask, InitableTask):
    """Users into the store; clicks out with their user's country (see the module)."""

    def init(self, context: TaskContext) -> None:
        self.users = context.get_store("users")
        self.output = SystemStream.parse(context.config.get_str("enrich.output", "kafka.enriched-clicks"))

    def process(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        if envelope.ssp.system_stream == USERS:
            row: dict[str, Any] = envelope.message
            self.users.put(str(row["user_id"]), row["country"])
            return
        click: dict[str, Any] = envelope.message
        user = str(envelope.key if envelope.key is not None else click["user_id"])
        country = self.users.get(user)
        collector.send(
            OutgoingMessageEnvelope(
                self.output, {"user_id": user, "page": click["page"], "country": country}, key=user
            )
        )
