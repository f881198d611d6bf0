"""A custom serde: JSON compressed with zlib, for large values in stores and streams.

``serializers.registry.zjson.class = samza_nb_ext.serde.ZlibJsonSerde``, then use the name ``zjson`` where a
serde is named: ``stores.<store>.msg.serde = zjson`` for a store, ``systems.<system>.samza.msg.serde = zjson``
for the streams of Kafka or the durable log.

The plug-in point: ``serializers.registry.<name>.class`` names a class with ``to_bytes(obj)`` and
``from_bytes(data)`` (instantiated with no arguments), or a factory with ``get_serde(name, config)``.
``from_bytes(to_bytes(x)) == x`` for every value the serde accepts.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from samza_nb.serde import SerdeError


class ZlibJsonSerde:
    """Compact JSON (sorted keys) compressed with zlib; ``level`` 1 (fast) to 9 (small)."""

    def __init__(self, level: int = 6) -> None:
        self.level = level

    def to_bytes(self, obj: Any) -> bytes:
        """The compressed JSON of ``obj``; SerdeError for what JSON cannot hold."""
        try:
            text = json.dumps(obj, separators=(",", ":"), sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise SerdeError(f"zjson cannot encode {type(obj).__name__} {obj!r:.60}: {exc}") from exc
        return zlib.compress(text.encode("utf-8"), self.level)

    def from_bytes(self, data: bytes) -> Any:
        """The value in ``data``; SerdeError for bytes that are not compressed JSON."""
        try:
            return json.loads(zlib.decompress(data).decode("utf-8"))
        except (zlib.error, UnicodeDecodeError, ValueError) as exc:
            raise SerdeError(f"zjson cannot decode {len(data)} bytes: {exc}") from exc
