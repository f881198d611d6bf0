"""Which partition a row of a Spark stream goes to: ``key_partition`` of its key's bytes.

The same function Kafka's and the durable log's producers use (:func:`samza_nb.systems.partitioner
.key_partition`), so a Spark stream of N partitions is co-partitioned with a Kafka or log stream of N
partitions. Key bytes: the stream's key serde when one is configured (``systems.<s>.samza.key.serde`` or
``systems.<s>.streams.<t>.samza.key.serde``), else a str as UTF-8, bytes as they are, an int as the UTF-8 of
its decimal form (any other value: the UTF-8 of its ``str``). A row without key (None) goes to partition 0.
Runs on Spark's Python workers: keep it importable and picklable.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samza_nb.serde import Serde, StreamSerdes
from samza_nb.systems.partitioner import key_partition

if TYPE_CHECKING:
    from samza_nb.config import Config


def key_serde(config: Config, system: str, stream: str) -> Serde | None:
    """The key serde configured for ``stream`` of ``system``; None when none is (the default rule)."""
    if (
        f"systems.{system}.streams.{stream}.samza.key.serde" in config
        or f"systems.{system}.samza.key.serde" in config
    ):
        return StreamSerdes(config, system).key_serde(stream)
    return None


def key_bytes(key: Any, serde: Serde | None = None) -> bytes:
    """The bytes of ``key`` that choose its partition (see the module)."""
    if serde is not None:
        return serde.to_bytes(key)
    if isinstance(key, bytes):
        return key
    if isinstance(key, (bytearray, memoryview)):
        return bytes(key)
    return str(key).encode("utf-8")


class RowPartitioner:
    """``partition(key)``: the partition among ``partitions`` of a row with ``key`` (picklable)."""

    def __init__(self, partitions: int, serde: Serde | None = None) -> None:
        self.partitions = partitions
        self.serde = serde

    def __call__(self, key: Any) -> int:
        """The partition of ``key`` (0 for None)."""
        if key is None:
            return 0
        return key_partition(key_bytes(key, self.serde), self.partitions)


__all__ = ["RowPartitioner", "key_bytes", "key_serde"]
