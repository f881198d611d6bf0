"""Which systems declare the optional capabilities: changelog creation (the StorageManager relies on it),
batch sends (the container's output buffer) and in-process streams (the planner and the runners)."""

from __future__ import annotations

from samza_nb import Config
from samza_nb.systems.base import BatchProducer, ChangelogStreamAdmin, InProcessSystemFactory, SystemAdmin
from samza_nb.systems.inmemory.system import InMemorySystemFactory
from tests.requirements import require


def test_the_kafka_admin_creates_changelogs_its_own_way() -> None:
    require("aiokafka", "the Kafka system needs the kafka extra: pip install -e '.[dev,kafka]'")
    from samza_nb.systems.kafka.admin import KafkaSystemAdmin
    from samza_nb.systems.kafka.config import KafkaSystemConfig

    config = Config({"systems.kafka.bootstrap.servers": "localhost:9092"})
    admin = KafkaSystemAdmin(KafkaSystemConfig.from_config("kafka", config))
    assert isinstance(admin, ChangelogStreamAdmin)


def test_other_admins_create_changelogs_as_plain_streams() -> None:
    admin = InMemorySystemFactory().get_admin("test", Config())
    assert isinstance(admin, SystemAdmin)
    assert not isinstance(admin, ChangelogStreamAdmin)


def test_the_in_memory_system_declares_in_process_streams_and_the_durable_log_does_not() -> None:
    from samza_nb.systems.log import LogSystemFactory

    assert isinstance(InMemorySystemFactory(), InProcessSystemFactory)
    assert issubclass(InMemorySystemFactory, InProcessSystemFactory)
    assert not isinstance(LogSystemFactory(), InProcessSystemFactory)
    config = Config({"systems.mem.inmemory.namespace": "shared"})
    assert InMemorySystemFactory().namespace("mem", config) == "shared"


def test_the_in_memory_producer_takes_batches() -> None:
    producer = InMemorySystemFactory().get_producer("test", Config())
    assert isinstance(producer, BatchProducer)
