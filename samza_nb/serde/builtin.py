"""The built-in serdes: ``string``, ``json``, ``bytes``, ``int``, ``long``, ``double``, ``pickle``.

Their byte layouts are Samza's: ``int``/``long``/``double`` are 4/8/8-byte big-endian (two's complement for
the integers, IEEE 754 for doubles), ``string`` is UTF-8, ``json`` is compact UTF-8 JSON with sorted keys
(so equal objects have equal bytes and therefore equal store keys). ``pickle`` is Python's pickle (protocol
5) for any picklable value: trusted data only, since unpickling runs code the bytes name.
"""

from __future__ import annotations

import json
import operator
import pickle
import struct
from collections.abc import Callable
from typing import Any, Final

from samza_nb.serde.base import SerdeError


def _describe(obj: object) -> str:
    text = repr(obj)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({type(obj).__name__})"


class StringSerde:
    """``str`` ⇄ UTF-8 bytes. Anything but a ``str`` is refused (no implicit ``str(obj)``)."""

    name: Final = "string"

    def __init__(self) -> None:
        self.fast_to_bytes: Callable[[Any], bytes] = str.encode
        """A C-level encoder for batches: the bytes of :meth:`to_bytes`, or an exception where it refuses."""

    def to_bytes(self, obj: Any) -> bytes:
        if isinstance(obj, str):
            try:
                return obj.encode("utf-8")
            except UnicodeEncodeError as exc:  # lone surrogates
                raise SerdeError(f"string serde cannot encode {_describe(obj)}: {exc}") from None
        raise SerdeError(f"string serde cannot encode {_describe(obj)}: expected a str")

    def from_bytes(self, data: bytes) -> Any:
        try:
            return data.decode("utf-8")
        except (UnicodeDecodeError, AttributeError) as exc:
            raise SerdeError(f"string serde cannot decode {_describe(data)}: {exc}") from None

    def __repr__(self) -> str:
        return "StringSerde()"


class JsonSerde:
    """JSON-compatible objects ⇄ compact UTF-8 JSON with sorted keys; NaN and infinities are refused.

    Tuples come back as lists and non-string dict keys as strings, as JSON has no other form for them.
    """

    name: Final = "json"

    def __init__(self) -> None:
        self._encode = json.JSONEncoder(
            separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
        ).encode
        self._decode = json.JSONDecoder().decode

    def to_bytes(self, obj: Any) -> bytes:
        try:
            return self._encode(obj).encode("utf-8")
        except (TypeError, ValueError, RecursionError) as exc:
            raise SerdeError(f"json serde cannot encode {_describe(obj)}: {exc}") from None

    def from_bytes(self, data: bytes) -> Any:
        try:
            return self._decode(data.decode("utf-8"))
        except (ValueError, AttributeError, RecursionError) as exc:
            raise SerdeError(f"json serde cannot decode {_describe(data)}: {exc}") from None

    def __repr__(self) -> str:
        return "JsonSerde()"


class BytesSerde:
    """``bytes`` ⇄ the same bytes. Anything but ``bytes`` is refused (use a serde that encodes it).

    ``unset_key`` names the config key that was left unset when this serde is a default, so that the
    error for a non-bytes object says which key to set.
    """

    name: Final = "bytes"

    def __init__(self, unset_key: str | None = None) -> None:
        self._unset_key = unset_key

    def to_bytes(self, obj: Any) -> bytes:
        if type(obj) is bytes:
            return obj
        if self._unset_key is not None:
            raise SerdeError(
                f"{_describe(obj)} is not bytes: {self._unset_key} is not set, so the bytes serde is used; "
                f"set {self._unset_key} to string, json, int, long or a registered serde"
            )
        raise SerdeError(f"bytes serde cannot encode {_describe(obj)}: expected bytes")

    def from_bytes(self, data: bytes) -> Any:
        return data

    def __repr__(self) -> str:
        return "BytesSerde()"


class _StructSerde:
    """A number in a fixed-size big-endian layout."""

    name: str = ""
    _struct: struct.Struct
    fast_to_bytes: Callable[[Any], bytes]
    """A C-level encoder for batches: the same bytes as :meth:`to_bytes`, or an exception where it refuses."""

    def _coerce(self, obj: Any) -> Any:
        raise NotImplementedError

    def to_bytes(self, obj: Any) -> bytes:
        try:
            return self._struct.pack(self._coerce(obj))
        except (struct.error, OverflowError) as exc:
            raise SerdeError(f"{self.name} serde cannot encode {_describe(obj)}: {exc}") from None

    def from_bytes(self, data: bytes) -> Any:
        try:
            return self._struct.unpack(data)[0]
        except (struct.error, TypeError) as exc:
            raise SerdeError(
                f"{self.name} serde cannot decode {_describe(data)}: "
                f"expected {self._struct.size} bytes ({exc})"
            ) from None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _IntegerSerde(_StructSerde):
    def _coerce(self, obj: Any) -> int:
        if type(obj) is int:
            return obj
        try:
            return operator.index(obj)  # int subclasses (bool: True == 1, as dict keys too), numpy integers
        except TypeError:
            raise SerdeError(f"{self.name} serde cannot encode {_describe(obj)}: expected an int") from None


class IntSerde(_IntegerSerde):
    """``int`` in [-2**31, 2**31) ⇄ 4 bytes, big-endian two's complement (Samza's IntegerSerde).

    In byte order, 0 … 2**31-1 come before -2**31 … -1.
    """

    name = "int"
    _struct = struct.Struct(">i")
    fast_to_bytes = _struct.pack


class LongSerde(_IntegerSerde):
    """``int`` in [-2**63, 2**63) ⇄ 8 bytes, big-endian two's complement (Samza's LongSerde)."""

    name = "long"
    _struct = struct.Struct(">q")
    fast_to_bytes = _struct.pack


class DoubleSerde(_StructSerde):
    """``float`` (or ``int``) ⇄ 8 bytes, big-endian IEEE 754 (Samza's DoubleSerde)."""

    name = "double"
    _struct = struct.Struct(">d")
    fast_to_bytes = _struct.pack

    def _coerce(self, obj: Any) -> float:
        if isinstance(obj, (float, int)):
            return float(obj)
        raise SerdeError(f"{self.name} serde cannot encode {_describe(obj)}: expected a float")


class PickleSerde:
    """Any picklable value ⇄ its pickle (protocol 5, fixed so that bytes do not change with the Python
    version). Trusted data only: unpickling runs whatever code the bytes name, so read only stores and
    streams your own jobs write.

    As a store key serde, mind that equal values may pickle differently (dicts built in another order,
    sets, floats vs ints): use it for keys such as tuples of str and int, whose pickle is canonical.
    """

    name: Final = "pickle"
    PROTOCOL: Final = 5

    def to_bytes(self, obj: Any) -> bytes:
        try:
            return pickle.dumps(obj, protocol=self.PROTOCOL)
        except Exception as exc:  # PicklingError, TypeError, AttributeError (a local class), ...
            raise SerdeError(f"pickle serde cannot encode {_describe(obj)}: {exc!r}") from None

    def from_bytes(self, data: bytes) -> Any:
        try:
            return pickle.loads(data)
        except Exception as exc:  # UnpicklingError, EOFError, ModuleNotFoundError, ...
            raise SerdeError(f"pickle serde cannot decode {_describe(data)}: {exc!r}") from None

    def __repr__(self) -> str:
        return "PickleSerde()"


__all__ = ["BytesSerde", "DoubleSerde", "IntSerde", "JsonSerde", "LongSerde", "PickleSerde", "StringSerde"]
