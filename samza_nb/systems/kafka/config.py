"""The settings of one Kafka system, read from the job config.

Keys (``<s>`` is the system name, ``<t>`` a stream/topic):

- ``systems.<s>.bootstrap.servers``: comma-separated ``host:port`` list (required; Samza's
  ``systems.<s>.consumer.bootstrap.servers`` / ``producer.bootstrap.servers`` are accepted too).
- ``systems.<s>.consumer.<setting>`` / ``systems.<s>.producer.<setting>``: passed to aiokafka's
  ``AIOKafkaConsumer`` / ``AIOKafkaProducer`` (Kafka's dotted names, e.g. ``fetch.max.wait.ms`` →
  ``fetch_max_wait_ms``); values are converted to the setting's type. A name aiokafka does not know is a
  ConfigError. Settings samza_nb owns (serializers, auto commit, the loop) are refused; ``group.id`` is
  ignored (Samza owns the partition assignment; there is no consumer group), as are the other
  consumer-group settings. The consumer uses the connection settings and fetch.max.wait.ms, fetch.min.bytes,
  fetch.max.bytes, max.partition.fetch.bytes, check.crcs, retry.backoff.ms, auto.offset.reset (earliest,
  latest or none) and isolation.level (read_uncommitted, the default, or read_committed: records of aborted
  transactions are skipped and nothing past the last stable offset is read; see :mod:`.transactions`).
- ``systems.<s>.samza.broker.timeout.ms`` (default 30000): how long the broker may stay unreachable or
  silent (connecting at start, fetching, delivering at a flush, reading metadata) before the operation
  fails with an error naming the broker.
- ``systems.<s>.samza.key.serde`` / ``systems.<s>.samza.msg.serde`` and per stream
  ``systems.<s>.streams.<t>.samza.key.serde`` / ``.samza.msg.serde``: see :mod:`samza_nb.serde.streams`.
  Store changelog streams default to bytes whatever the system-wide serde (the stores serialize their own
  records).
- ``systems.<s>.streams.<t>.partitions`` (default 1): partitions of a topic samza_nb creates for it.
- ``systems.<s>.default.stream.replication.factor`` (default 1) and ``systems.<s>.default.stream.<config>``
  (Kafka topic configs such as ``retention.ms``): applied to every topic samza_nb creates.

Samza-era defaults differ from aiokafka's in three places: the producer waits for ``acks=all`` (a
delivery is never silently lost), the consumer's ``auto.offset.reset`` is ``earliest`` (a starting offset
that no longer exists resumes at the oldest message: at-least-once), and auto commit is off.
"""

from __future__ import annotations

import inspect
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from samza_nb.config.key_spec import parse_bool, parse_int
from samza_nb.errors import ConfigError
from samza_nb.serde import Serde, StreamSerdes
from samza_nb.systems.kafka.transactions import ISOLATION_LEVELS

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

DEFAULT_BROKER_TIMEOUT_MS: Final[int] = 30_000
"""Default of ``systems.<s>.samza.broker.timeout.ms``."""

_OWNED: Final[dict[str, str]] = {
    "loop": "samza_nb runs the clients on the container's loop",
    "bootstrap_servers": "set systems.<s>.bootstrap.servers",
    "key_deserializer": "use systems.<s>.samza.key.serde",
    "value_deserializer": "use systems.<s>.samza.msg.serde",
    "key_serializer": "use systems.<s>.samza.key.serde",
    "value_serializer": "use systems.<s>.samza.msg.serde",
    "enable_auto_commit": "samza_nb checkpoints offsets itself",
    "partition_assignment_strategy": "samza_nb assigns partitions itself",
    "transactional_id": "transactions are not supported",
}
_IGNORED: Final[frozenset[str]] = frozenset({"group_id", "zookeeper_connect"})
DEFAULT_PRODUCER_BATCH_BYTES: Final[int] = 1_000_000
"""``systems.<s>.producer.max.batch.size`` unless set: the most bytes of one record batch per partition."""
_OFFSET_RESET_ALIASES: Final[dict[str, str]] = {"largest": "latest", "smallest": "earliest"}


def _parameters(cls: type[Any]) -> dict[str, Any]:
    """Keyword parameters of ``cls.__init__`` with their defaults (inspect.Parameter.empty when none)."""
    signature = inspect.signature(cls.__init__)
    return {
        name: p.default
        for name, p in signature.parameters.items()
        if name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }


_CONSUMER_PARAMS: Final[dict[str, Any]] = _parameters(AIOKafkaConsumer)
_PRODUCER_PARAMS: Final[dict[str, Any]] = _parameters(AIOKafkaProducer)


_INT_SUFFIXES: Final[tuple[str, ...]] = ("_ms", "_bytes", "_records", "_size", "_count")


def _convert(key: str, name: str, raw: str, default: Any) -> Any:
    """``raw`` as the type of the aiokafka default: bool, int, float or str; a setting whose default is
    None or an object is an int when its name says so (``*_ms``, ``*_bytes``, ...) or looks like one (acks),
    else the text."""
    text = raw.strip()
    if isinstance(default, bool):
        return parse_bool(key, text)
    if isinstance(default, int):
        return parse_int(key, text)
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{key}={raw!r} is not valid: expected a number", key=key) from None
    if isinstance(default, str):
        return text
    if name.endswith(_INT_SUFFIXES):
        return parse_int(key, text)
    if default is not None and text.lstrip("-").isdigit():
        return int(text)
    return text


def _client_settings(
    config: Config, system: str, role: str, params: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """aiokafka keyword arguments from ``systems.<system>.<role>.*``, and a bootstrap address given there."""
    prefix = f"systems.{system}.{role}."
    settings: dict[str, Any] = {}
    bootstrap: str | None = None
    for key in config:
        if not key.startswith(prefix):
            continue
        setting = key[len(prefix) :]
        name = setting.replace(".", "_").replace("-", "_")
        raw = config[key]
        if name == "bootstrap_servers":
            bootstrap = raw
            continue
        if name in _IGNORED:
            log.debug("%s is ignored: samza_nb owns the assignment of partitions", key)
            continue
        if name in _OWNED:
            raise ConfigError(f"{key} cannot be set: {_OWNED[name].replace('<s>', system)}", key=key)
        if name not in params:
            raise ConfigError(
                f"{key}: {setting!r} is not an aiokafka {role} setting (known: "
                f"{', '.join(sorted(n.replace('_', '.') for n in params if n not in _OWNED))})",
                key=key,
            )
        value = _convert(key, name, raw, params[name])
        if name == "auto_offset_reset" and isinstance(value, str):
            value = _OFFSET_RESET_ALIASES.get(value.lower(), value.lower())
            if value not in ("earliest", "latest", "none"):
                raise ConfigError(
                    f"{key}={raw!r} is not valid: expected earliest, latest or none (or smallest/largest)",
                    key=key,
                )
        settings[name] = value
    return settings, bootstrap


def _isolation_level(system: str, raw: Any) -> str:
    """``systems.<s>.consumer.isolation.level`` checked: read_uncommitted (the default) or read_committed."""
    value = str(raw).strip().lower()
    if value not in ISOLATION_LEVELS:
        key = f"systems.{system}.consumer.isolation.level"
        raise ConfigError(f"{key}={raw!r} is not valid: expected {' or '.join(ISOLATION_LEVELS)}", key=key)
    return value


@dataclass
class KafkaSystemConfig:
    """Everything a Kafka system's admin, consumer and producer need, checked once at construction."""

    system: str
    bootstrap_servers: str
    consumer_settings: dict[str, Any]
    producer_settings: dict[str, Any]
    broker_timeout_s: float
    replication_factor: int
    topic_configs: dict[str, str]
    config: Config = field(repr=False)
    _serdes: StreamSerdes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._serdes = StreamSerdes(self.config, self.system)

    @classmethod
    def from_config(cls, system: str, config: Config) -> KafkaSystemConfig:
        """Read and check the settings of ``system``; ConfigError naming the key on a bad value."""
        consumer, consumer_bootstrap = _client_settings(config, system, "consumer", _CONSUMER_PARAMS)
        producer, producer_bootstrap = _client_settings(config, system, "producer", _PRODUCER_PARAMS)
        key = f"systems.{system}.bootstrap.servers"
        bootstrap = config.get_str(key) or consumer_bootstrap or producer_bootstrap
        if bootstrap is None or not bootstrap.strip():
            raise ConfigError(
                f"missing required config {key}: the Kafka brokers of system {system!r} "
                "(host:port, comma-separated; `samza-nb dev-broker` starts a local one)",
                key=key,
            )
        servers = ",".join(part.strip() for part in bootstrap.split(",") if part.strip())
        for server in servers.split(","):
            host, sep, port = server.rpartition(":")
            if not sep or not host or not port.isdigit():
                raise ConfigError(f"{key}={bootstrap!r}: {server!r} is not host:port", key=key)
        if "isolation_level" in consumer:
            consumer["isolation_level"] = _isolation_level(system, consumer["isolation_level"])
        consumer.setdefault("auto_offset_reset", "earliest")
        producer.setdefault("acks", "all")
        # aiokafka has one produce request in flight per broker, so the batch size bounds throughput:
        # librdkafka's default (1,000,000 bytes), not aiokafka's 16 KB.
        producer.setdefault("max_batch_size", DEFAULT_PRODUCER_BATCH_BYTES)
        timeout_key = f"systems.{system}.samza.broker.timeout.ms"
        timeout_ms = parse_int(timeout_key, config.get_str(timeout_key, str(DEFAULT_BROKER_TIMEOUT_MS)), 1)
        default_prefix = f"systems.{system}.default.stream."
        replication_key = default_prefix + "replication.factor"
        replication = parse_int(replication_key, config.get_str(replication_key, "1"), 1)
        topic_configs = {
            k[len(default_prefix) :]: v
            for k, v in config.items()
            if k.startswith(default_prefix) and k != replication_key
        }
        settings = cls(
            system=system,
            bootstrap_servers=servers,
            consumer_settings=consumer,
            producer_settings=producer,
            broker_timeout_s=timeout_ms / 1000.0,
            replication_factor=replication,
            topic_configs=topic_configs,
            config=config,
        )
        settings.key_serde("")  # a bad system-wide serde fails here, naming its key
        settings.msg_serde("")
        return settings

    # -- serdes ---------------------------------------------------------------------------------------
    def key_serde(self, stream: str) -> Serde:
        """The key serde of ``stream`` (``""``: the system-wide one)."""
        return self._serdes.key_serde(stream)

    def msg_serde(self, stream: str) -> Serde:
        """The message serde of ``stream`` (``""``: the system-wide one)."""
        return self._serdes.msg_serde(stream)

    def changelog_streams(self) -> frozenset[str]:
        """The streams of this system that are store changelogs (their serde is bytes unless configured
        per stream)."""
        return self._serdes.changelog_streams()

    # -- streams samza_nb creates ---------------------------------------------------------------------
    def partitions_for(self, stream: str) -> int:
        """``systems.<s>.streams.<stream>.partitions`` (default 1): partitions of a topic created for it."""
        key = f"systems.{self.system}.streams.{stream}.partitions"
        return parse_int(key, self.config.get_str(key, "1"), 1)

    def describe_brokers(self) -> str:
        """How error messages name the brokers: ``Kafka broker(s) <servers> of system '<s>'``."""
        return f"Kafka broker {self.bootstrap_servers} (system {self.system!r})"


__all__ = ["DEFAULT_BROKER_TIMEOUT_MS", "KafkaSystemConfig"]
