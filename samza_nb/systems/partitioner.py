"""Kafka's default partitioner: murmur2 of the key bytes, made positive, modulo the partition count.

Shared by the systems that place keyed messages the way a Java Kafka producer does (Kafka, the durable
log), so a key lands on the same partition whichever of them carries it.
"""

from __future__ import annotations

import struct

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` of ``data`` as an unsigned 32-bit integer."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length & ~3
    for (k,) in struct.iter_unpack("<I", data[:whole]):
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    extra = length & 3
    if extra >= 3:
        h ^= data[whole + 2] << 16
    if extra >= 2:
        h ^= data[whole + 1] << 8
    if extra >= 1:
        h ^= data[whole]
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition of ``key`` among ``partitions``, as Kafka's default partitioner picks it."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


__all__ = ["key_partition", "murmur2"]
