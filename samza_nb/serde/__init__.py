"""Serdes: how keys and values become bytes and back, by name, for stores, changelogs and streams alike.

Built-in names: ``string`` (UTF-8), ``json`` (compact, sorted keys, no NaN), ``bytes`` (identity), ``int``
(4-byte big-endian), ``long`` (8-byte big-endian), ``double`` (8-byte IEEE 754), ``pickle`` (Python's pickle,
protocol 5; trusted data only: unpickling runs code the bytes name). User serdes are configured as
``serializers.registry.<name>.class = package.module.Class`` (a serde class instantiated with no arguments,
or a factory with ``get_serde(name, config)``); Samza's serde factory class names and dotted paths of serde
classes are names too. :class:`StreamSerdes` picks the serdes of a system's streams from
``systems.<s>.samza.key.serde`` / ``.msg.serde``.
"""

from samza_nb.serde.base import FastSerde, Serde, SerdeError, SerdeFactory
from samza_nb.serde.builtin import (
    BytesSerde,
    DoubleSerde,
    IntSerde,
    JsonSerde,
    LongSerde,
    PickleSerde,
    StringSerde,
)
from samza_nb.serde.registry import BUILTIN_SERDES, SerdeRegistry, serde_for
from samza_nb.serde.streams import StreamSerdes, is_identity

__all__ = [
    "BUILTIN_SERDES",
    "BytesSerde",
    "DoubleSerde",
    "FastSerde",
    "IntSerde",
    "JsonSerde",
    "LongSerde",
    "PickleSerde",
    "Serde",
    "SerdeError",
    "SerdeFactory",
    "SerdeRegistry",
    "StreamSerdes",
    "StringSerde",
    "is_identity",
    "serde_for",
]
