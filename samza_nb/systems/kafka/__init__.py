"""The Kafka system, on aiokafka (``pip install 'samza_nb[kafka]'``).

``systems.<name>.samza.factory = samza_nb.systems.kafka.KafkaSystemFactory`` with
``systems.<name>.bootstrap.servers``; see :mod:`samza_nb.systems.kafka.config` for every setting.
Importing it rate-limits aiokafka's repeated log records (one per kind every 10 s, see
:class:`~samza_nb.systems.kafka.clients.RepeatedLogFilter`).
Kafka-backed checkpoints: :class:`samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory`.
"""

from __future__ import annotations

try:
    import aiokafka  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError("the Kafka system needs aiokafka: pip install 'samza_nb[kafka]'") from exc

from samza_nb.serde import Serde, serde_for
from samza_nb.systems.kafka.admin import KafkaSystemAdmin
from samza_nb.systems.kafka.clients import quiet_repeated_client_logs
from samza_nb.systems.kafka.config import KafkaSystemConfig
from samza_nb.systems.kafka.consumer import KafkaSystemConsumer
from samza_nb.systems.kafka.factory import KafkaSystemFactory
from samza_nb.systems.kafka.producer import KafkaSystemProducer

quiet_repeated_client_logs()

__all__ = [
    "KafkaSystemAdmin",
    "KafkaSystemConfig",
    "KafkaSystemConsumer",
    "KafkaSystemFactory",
    "KafkaSystemProducer",
    "Serde",
    "serde_for",
]
