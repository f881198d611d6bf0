"""``KafkaSystemFactory``: the Kafka system's admin, consumer and producer, built from the job config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.systems.kafka.admin import KafkaSystemAdmin
from samza_nb.systems.kafka.config import KafkaSystemConfig
from samza_nb.systems.kafka.consumer import KafkaSystemConsumer
from samza_nb.systems.kafka.producer import KafkaSystemProducer

if TYPE_CHECKING:
    from samza_nb.config import Config


class KafkaSystemFactory:
    """``systems.<name>.samza.factory = samza_nb.systems.kafka.KafkaSystemFactory``.

    Needs ``systems.<name>.bootstrap.servers``; the other settings are described in
    :mod:`samza_nb.systems.kafka.config`. A bad setting is a ConfigError naming its key, raised by
    whichever of the three getters is called first.
    """

    @staticmethod
    def settings(system_name: str, config: Config) -> KafkaSystemConfig:
        """The checked settings of ``system_name``."""
        return KafkaSystemConfig.from_config(system_name, config)

    def get_admin(self, system_name: str, config: Config) -> KafkaSystemAdmin:
        """The admin of ``system_name`` (metadata, offsets, topic creation)."""
        return KafkaSystemAdmin(self.settings(system_name, config))

    def get_consumer(self, system_name: str, config: Config) -> KafkaSystemConsumer:
        """A consumer of ``system_name``."""
        return KafkaSystemConsumer(self.settings(system_name, config))

    def get_producer(self, system_name: str, config: Config) -> KafkaSystemProducer:
        """A producer of ``system_name``."""
        settings = self.settings(system_name, config)
        return KafkaSystemProducer(settings, KafkaSystemAdmin(settings))


__all__ = ["KafkaSystemFactory"]
