"""The built-in serdes: ``string``, ``json``, ``bytes``, ``int``, ``long``, ``double``, ``pickle``.

One set for stores, changelogs and streams (Kafka, the durable log): the same bytes everywhere. Their byte
layouts are Samza's: ``int``/``long``/``double`` are 4/8/8-byte big-endian (two's complement for the
integers, IEEE 754 for doubles), ``string`` is UTF-8, ``json`` is compact UTF-8 JSON with sorted keys (so
equal objects have equal bytes, hence equal store keys and equal partitions) that refuses NaN and the
infinities (JSON has no form for them; Samza's Jackson-based JsonSerde refuses them too). ``pickle`` is
Python's pickle (protocol 5) for any picklable value: trusted data only, since unpickling runs code the
bytes name.
"""

from __future__ import annotations

import json
import math
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
        """The UTF-8 bytes of a ``str``; a :class:`SerdeError` for anything else."""
        if isinstance(obj, str):
            try:
                return obj.encode("utf-8")
            except UnicodeEncodeError as exc:  # lone surrogates
                raise SerdeError(f"string serde cannot encode {_describe(obj)}: {exc}") from None
        raise SerdeError(f"string serde cannot encode {_describe(obj)}: expected a str")

    def from_bytes(self, data: bytes) -> Any:
        """``data`` decoded as UTF-8; a :class:`SerdeError` when it is not UTF-8."""
        try:
            return data.decode("utf-8")
        except (UnicodeDecodeError, AttributeError) as exc:
            raise SerdeError(f"string serde cannot decode {_describe(data)}: not UTF-8 ({exc})") from None

    def __repr__(self) -> str:
        return "StringSerde()"


_encode_json: Final = json.JSONEncoder(
    separators=(",", ":"), sort_keys=True, ensure_ascii=False, allow_nan=False
).encode
_decode_json: Final = json.JSONDecoder().decode


class JsonSerde:
    """JSON-compatible objects ⇄ compact UTF-8 JSON with sorted keys; NaN and infinities are refused.

    Tuples come back as lists and non-string dict keys as strings, as JSON has no other form for them; a
    dict whose keys mix types (``{1: .., "a": ..}``) is refused, as its keys cannot be sorted. Decoding
    also takes the UTF-16/32 (and BOM-marked) JSON that ``json.loads`` detects.
    """

    name: Final = "json"

    def to_bytes(self, obj: Any) -> bytes:
        """``obj`` as compact JSON with sorted keys; a :class:`SerdeError` naming what JSON cannot hold."""
        try:
            if type(obj) is int:  # what the encoder writes for one, without building a C encoder per call
                return int.__repr__(obj).encode()
            return _encode_json(obj).encode("utf-8")
        except ValueError as exc:
            where = _non_finite(obj)
            detail = f"{where} has no JSON form (send None or a string instead)" if where else str(exc)
            raise SerdeError(f"json serde cannot encode {_describe(obj)}: {detail}") from None
        except TypeError as exc:
            if "not supported between instances" in str(exc):
                detail = f"dict keys of different types cannot be sorted ({exc}); use str keys"
            else:
                detail = str(exc)
            raise SerdeError(f"json serde cannot encode {_describe(obj)}: {detail}") from None
        except RecursionError as exc:
            raise SerdeError(f"json serde cannot encode {_describe(obj)}: {exc}") from None

    def from_bytes(self, data: bytes) -> Any:
        """The JSON value in ``data``; a :class:`SerdeError` when it is not JSON."""
        if type(data) is bytes:
            # UTF-8 without a BOM, as written here, decoded at once; anything else (a BOM, UTF-16/32, whose
            # NULs are never JSON as UTF-8, lone surrogates) fails here and takes json.loads' detection.
            try:
                return _decode_json(data.decode("utf-8"))
            except ValueError:
                pass
            except RecursionError as exc:  # nested deeper than the decoder recurses
                raise SerdeError(
                    f"json serde cannot decode {_describe(data)}: nested too deep ({exc})"
                ) from None
        try:
            return json.loads(data)
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
            raise SerdeError(f"json serde cannot decode {_describe(data)}: not JSON ({exc})") from None

    def __repr__(self) -> str:
        return "JsonSerde()"


def _non_finite(obj: Any) -> str | None:
    """Where in ``obj`` the first NaN or infinity is (``value['a'][1] = nan``), or None."""
    stack: list[tuple[str, Any]] = [("value", obj)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"{path} = {item!r}"
        if isinstance(item, dict):
            stack.extend((f"{path}[{k!r}]", v) for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


class BytesSerde:
    """``bytes`` ⇄ the same bytes (``bytearray`` and ``memoryview`` are taken as their bytes). Anything else
    is refused: use a serde that encodes it.

    ``unset_key`` names the config key that was left unset when this serde is a default, so that the
    error for a non-bytes object says which key to set.
    """

    name: Final = "bytes"

    def __init__(self, unset_key: str | None = None) -> None:
        self._unset_key = unset_key

    def to_bytes(self, obj: Any) -> bytes:
        """``obj`` itself when it is bytes; a :class:`SerdeError` for anything else."""
        if type(obj) is bytes:
            return obj
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return bytes(obj)
        if self._unset_key is not None:
            raise SerdeError(
                f"{_describe(obj)} is not bytes: {self._unset_key} is not set, so the bytes serde is used; "
                f"set {self._unset_key} to string, json, int, long, double, pickle or a registered serde"
            )
        raise SerdeError(
            f"bytes serde cannot encode {_describe(obj)}: expected bytes (configure a serde such as string "
            "or json for other values)"
        )

    def from_bytes(self, data: bytes) -> Any:
        """``data`` unchanged."""
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
        """The fixed-size bytes of ``obj``; a :class:`SerdeError` for another type or a number out of
        range."""
        try:
            return self._struct.pack(self._coerce(obj))
        except (struct.error, OverflowError) as exc:
            raise SerdeError(
                f"{self.name} serde cannot encode {_describe(obj)}: out of range ({exc})"
            ) from None

    def from_bytes(self, data: bytes) -> Any:
        """The number in ``data``; a :class:`SerdeError` unless it has exactly the layout's size."""
        try:
            return self._struct.unpack(data)[0]
        except (struct.error, TypeError):
            got = f"got {len(data)}" if isinstance(data, (bytes, bytearray, memoryview)) else "got no bytes"
            raise SerdeError(
                f"{self.name} serde cannot decode {_describe(data)}: "
                f"expected exactly {self._struct.size} bytes, {got}"
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
        """The pickle of ``obj``; a :class:`SerdeError` for what cannot be pickled."""
        try:
            return pickle.dumps(obj, protocol=self.PROTOCOL)
        except Exception as exc:  # PicklingError, TypeError, AttributeError (a local class), ...
            raise SerdeError(f"pickle serde cannot encode {_describe(obj)}: {exc!r}") from None

    def from_bytes(self, data: bytes) -> Any:
        """The value pickled in ``data`` (runs the code it names: trusted data only)."""
        try:
            return pickle.loads(data)
        except Exception as exc:  # UnpicklingError, EOFError, ModuleNotFoundError, ...
            raise SerdeError(f"pickle serde cannot decode {_describe(data)}: {exc!r}") from None

    def __repr__(self) -> str:
        return "PickleSerde()"


BYTES_TYPES: Final = frozenset({BytesSerde, DoubleSerde, IntSerde, JsonSerde, LongSerde, StringSerde})
"""The built-in serde classes whose ``to_bytes`` (and ``fast_to_bytes``) always return ``bytes`` itself, so
callers need not check the result."""

__all__ = [
    "BYTES_TYPES",
    "BytesSerde",
    "DoubleSerde",
    "IntSerde",
    "JsonSerde",
    "LongSerde",
    "PickleSerde",
    "StringSerde",
]
