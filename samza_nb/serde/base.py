"""The Serde protocol: how keys and values become bytes (for stores, changelogs and streams) and back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from samza_nb.config import Config
from samza_nb.errors import SamzaError


@runtime_checkable
class Serde(Protocol):
    """Turns objects into bytes and back.

    ``from_bytes(to_bytes(x)) == x`` for every ``x`` the serde accepts. ``to_bytes`` raises
    :class:`SerdeError` (or any exception; callers wrap it) for an object it cannot encode, ``from_bytes``
    for bytes it cannot decode. A serde is stateless: one instance may serve many stores and threads.
    """

    def to_bytes(self, obj: Any) -> bytes:
        """The bytes of ``obj``."""
        ...

    def from_bytes(self, data: bytes) -> Any:
        """The object encoded in ``data``."""
        ...


@runtime_checkable
class FastSerde(Serde, Protocol):
    """A serde that also offers a faster encoder for batches.

    ``fast_to_bytes(obj)`` returns the same bytes as ``to_bytes(obj)`` for every object ``to_bytes``
    accepts, and raises (any exception) where ``to_bytes`` refuses; callers then redo the call with
    ``to_bytes`` for its exact error.
    """

    fast_to_bytes: Callable[[Any], bytes]


@runtime_checkable
class SerdeFactory(Protocol):
    """What ``serializers.registry.<name>.class`` may name instead of a serde (Samza's SerdeFactory)."""

    def get_serde(self, name: str, config: Config) -> Serde:
        """The serde registered as ``name``."""
        ...


class SerdeError(SamzaError):
    """An object could not be encoded, or bytes could not be decoded, by a serde."""


__all__ = ["FastSerde", "Serde", "SerdeError", "SerdeFactory"]
