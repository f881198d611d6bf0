"""Looking into a running container's stores from outside its loop: point lookups and committed rows
(:mod:`.reader`), served to the job coordinator over HTTP by a container process (:mod:`.server`)."""

from samza_nb.container.queries.reader import (
    PARTITIONS_HEADER,
    KeyAnswer,
    SerdeCache,
    StoreNotReady,
    StoreReader,
    UnknownStore,
    error_status,
    key_bytes,
    owning_partition,
    plain,
    store_serdes,
)

__all__ = [
    "PARTITIONS_HEADER",
    "KeyAnswer",
    "SerdeCache",
    "StoreNotReady",
    "StoreReader",
    "UnknownStore",
    "error_status",
    "key_bytes",
    "owning_partition",
    "plain",
    "store_serdes",
]
