"""Which admins declare the optional changelog capability the StorageManager relies on."""

from __future__ import annotations

from samza_nb import Config
from samza_nb.systems.base import ChangelogStreamAdmin, SystemAdmin
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
