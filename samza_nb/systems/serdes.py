"""Serdes at a system's boundary (Kafka, the durable log): how message keys and values become bytes and back.

Kafka and the durable log carry bytes. Such a system reads and writes bytes unchanged by default; a serde
name turns them into Python values on the way in and back into bytes on the way out. Names: ``bytes``
(the default, no copy), ``string`` (UTF-8), ``json`` (UTF-8 JSON, compact), ``int`` (4-byte big-endian
signed, Samza's IntegerSerde), ``long`` (8-byte big-endian signed, Samza's LongSerde), ``pickle``
(Python's pickle: any picklable value; decoding runs code the bytes name, so use it only for streams that
only trusted jobs write), or the dotted path of a class with ``to_bytes(obj) -> bytes`` and
``from_bytes(data) -> obj`` (instantiated with no arguments).

Config: ``systems.<system>.samza.key.serde`` / ``systems.<system>.samza.msg.serde`` for every stream of
the system, overridden per stream by ``systems.<system>.streams.<stream>.samza.key.serde`` /
``.samza.msg.serde``. A null (a tombstone, or a message without key) is ``None`` whatever the serde. Store
changelogs stay bytes unless configured per stream (the stores serialize their own records).
"""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from samza_nb.config.plugins import import_dotted
from samza_nb.config.stores import changelog_stream
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.serde.builtin import PickleSerde

if TYPE_CHECKING:
    from samza_nb.config import Config


@runtime_checkable
class Serde(Protocol):
    """Turns values into bytes and back; ``from_bytes(to_bytes(v)) == v`` for the values it accepts."""

    def to_bytes(self, obj: Any) -> bytes:
        """The bytes of ``obj``; a SamzaError when it cannot encode it."""
        ...

    def from_bytes(self, data: bytes) -> Any:
        """The value encoded in ``data``; a SamzaError when ``data`` is not such an encoding."""
        ...


class BytesSerde:
    """Bytes unchanged (bytearray and memoryview are accepted on the way out)."""

    def to_bytes(self, obj: Any) -> bytes:
        """``obj`` itself when it is bytes; a SamzaError for anything else (use string/json for those)."""
        if isinstance(obj, bytes):
            return obj
        if isinstance(obj, (bytearray, memoryview)):
            return bytes(obj)
        raise SamzaError(
            f"the bytes serde cannot send a {type(obj).__name__} ({_short(obj)}): send bytes, or configure "
            "a serde such as string or json (samza.msg.serde / samza.key.serde)"
        )

    def from_bytes(self, data: bytes) -> bytes:
        """``data`` unchanged."""
        return data


class StringSerde:
    """UTF-8 text."""

    def to_bytes(self, obj: Any) -> bytes:
        """The UTF-8 bytes of a str; a SamzaError for anything else."""
        if not isinstance(obj, str):
            raise SamzaError(f"the string serde needs a str, got a {type(obj).__name__} ({_short(obj)})")
        return obj.encode("utf-8")

    def from_bytes(self, data: bytes) -> str:
        """``data`` decoded as UTF-8; a SamzaError when it is not UTF-8."""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SamzaError(f"the string serde got bytes that are not UTF-8: {exc}") from None


_encode_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_decode_json = json.JSONDecoder().decode


class JsonSerde:
    """Compact UTF-8 JSON."""

    def to_bytes(self, obj: Any) -> bytes:
        """``obj`` as compact JSON; a SamzaError when it is not JSON-serializable."""
        try:
            if type(obj) is int:  # what the encoder writes for one (which builds a C encoder per call)
                return int.__repr__(obj).encode()
            return _encode_json(obj).encode("utf-8")
        except (TypeError, ValueError) as exc:
            raise SamzaError(f"the json serde cannot encode {_short(obj)}: {exc}") from None

    def from_bytes(self, data: bytes) -> Any:
        """The JSON value in ``data`` (UTF-8, or the UTF-16/32 ``json.loads`` detects); a SamzaError when
        it is not JSON."""
        if type(data) is bytes:
            # UTF-8 without a BOM, as written here, decoded at once; anything else (a BOM, UTF-16/32, whose
            # NULs are never JSON as UTF-8, lone surrogates) fails here and takes json.loads' detection.
            try:
                return _decode_json(data.decode("utf-8"))
            except ValueError:
                pass
            except RecursionError as exc:  # nested deeper than the decoder recurses
                raise SamzaError(f"the json serde got JSON nested too deep ({_short(data)}): {exc}") from None
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
            raise SamzaError(f"the json serde got bytes that are not JSON ({_short(data)}): {exc}") from None


class _FixedIntSerde:
    __slots__ = ("_name", "_struct")

    def __init__(self, name: str, fmt: str) -> None:
        self._name = name
        self._struct = struct.Struct(fmt)

    def to_bytes(self, obj: Any) -> bytes:
        """The big-endian bytes of an int; a SamzaError for anything else or an int out of range."""
        if not isinstance(obj, int) or isinstance(obj, bool):
            raise SamzaError(
                f"the {self._name} serde needs an int, got a {type(obj).__name__} ({_short(obj)})"
            )
        try:
            return self._struct.pack(obj)
        except struct.error:
            raise SamzaError(f"the {self._name} serde cannot encode {obj}: out of range") from None

    def from_bytes(self, data: bytes) -> int:
        """The int in ``data``; a SamzaError unless it has exactly the serde's size."""
        try:
            value: int = self._struct.unpack(data)[0]
        except struct.error:
            raise SamzaError(
                f"the {self._name} serde needs exactly {self._struct.size} bytes, got {len(data)}"
            ) from None
        return value


class IntegerSerde(_FixedIntSerde):
    """A 32-bit signed int, 4 bytes big-endian (Samza's IntegerSerde)."""

    def __init__(self) -> None:
        super().__init__("int", ">i")


class LongSerde(_FixedIntSerde):
    """A 64-bit signed int, 8 bytes big-endian (Samza's LongSerde)."""

    def __init__(self) -> None:
        super().__init__("long", ">q")


BUILTIN_SERDES: Final[dict[str, type[Any]]] = {
    "bytes": BytesSerde,
    "string": StringSerde,
    "json": JsonSerde,
    "int": IntegerSerde,
    "integer": IntegerSerde,
    "long": LongSerde,
    "pickle": PickleSerde,
}
"""The serde names every system with serdes knows."""

DEFAULT_SERDE: Final[str] = "bytes"


def serde_for(name: str, key: str) -> Serde:
    """The serde called ``name`` (a built-in name or a dotted class path); a ConfigError naming ``key``
    when there is no such serde."""
    text = name.strip()
    builtin = BUILTIN_SERDES.get(text.lower())
    if builtin is not None:
        serde: Serde = builtin()
        return serde
    if "." not in text:
        raise ConfigError(
            f"{key}={name!r} is not a serde: expected one of {', '.join(sorted(BUILTIN_SERDES))} "
            "or the dotted path of a class with to_bytes/from_bytes",
            key=key,
        )
    target = import_dotted(text, key)
    try:
        instance = target() if isinstance(target, type) else target
    except Exception as exc:
        raise ConfigError(f"{key}={name!r}: could not instantiate it: {exc!r}", key=key) from exc
    if not isinstance(instance, Serde):
        raise ConfigError(f"{key}={name!r} is not a serde: it lacks to_bytes/from_bytes", key=key)
    return instance


class StreamSerdes:
    """The key and message serdes of the streams of one system, from its config (cached per stream)."""

    def __init__(self, config: Config, system: str) -> None:
        self.config = config
        self.system = system
        self._serdes: dict[tuple[str, str], Serde] = {}
        self._changelogs: frozenset[str] | None = None

    def key_serde(self, stream: str) -> Serde:
        """The key serde of ``stream`` (``""``: the system-wide one)."""
        return self._serde(stream, "key")

    def msg_serde(self, stream: str) -> Serde:
        """The message serde of ``stream`` (``""``: the system-wide one)."""
        return self._serde(stream, "msg")

    def _serde(self, stream: str, kind: str) -> Serde:
        cached = self._serdes.get((stream, kind))
        if cached is not None:
            return cached
        system_key = f"systems.{self.system}.samza.{kind}.serde"
        stream_key = f"systems.{self.system}.streams.{stream}.samza.{kind}.serde"
        if stream and stream_key in self.config:
            key, name = stream_key, self.config[stream_key]
        elif stream and stream in self.changelog_streams():
            key, name = stream_key, DEFAULT_SERDE  # stores serialize their own records
        else:
            key, name = system_key, self.config.get_str(system_key, DEFAULT_SERDE)
        serde = serde_for(name, key)
        self._serdes[(stream, kind)] = serde
        return serde

    def changelog_streams(self) -> frozenset[str]:
        """The streams of this system that are store changelogs (``stores.<name>.changelog`` =
        ``<system>.<stream>``, or a bare stream on the job's changelog or default system). They carry the
        stores' own bytes: their serde is bytes unless configured per stream."""
        if self._changelogs is None:
            stores = {key[len("stores.") : -len(".changelog")] for key in self.config if _is_changelog(key)}
            streams = (changelog_stream(self.config, store) for store in stores)
            self._changelogs = frozenset(
                s.stream for s in streams if s is not None and s.system == self.system
            )
        return self._changelogs


def _is_changelog(key: str) -> bool:
    return key.startswith("stores.") and key.endswith(".changelog") and key.count(".") == 2


def is_identity(serde: Serde) -> bool:
    """True for the bytes serde, which the consumer skips entirely (no call per message)."""
    return type(serde) is BytesSerde


def _short(obj: Any, limit: int = 60) -> str:
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = [
    "BUILTIN_SERDES",
    "DEFAULT_SERDE",
    "BytesSerde",
    "IntegerSerde",
    "JsonSerde",
    "LongSerde",
    "PickleSerde",
    "Serde",
    "StreamSerdes",
    "StringSerde",
    "is_identity",
    "serde_for",
]
