"""Copies of store values: a task never holds an object a store keeps (docs/concepts/state.md).

A value read from a store is the task's own: changing it changes nothing in the store until it is put, as
after a restart (where every value is decoded anew). A value put is the store's own: changing the object
afterwards changes nothing in the store. The object cache pays for that with :func:`copy_value`, only for
values that can change: ``int``, ``float``, ``str``, ``bytes`` and the like, and tuples and frozensets of
them, are handed out as they are.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from typing import Any, Final

PLAIN: Final[frozenset[type]] = frozenset(
    {int, float, complex, bool, str, bytes, Decimal, Fraction, range, type(None)}
)
"""The types whose values cannot change: shared, never copied."""

STORABLE_PLAIN: Final[frozenset[type]] = PLAIN - {type(None)}
"""The unchangeable types a store can hold as a value (None is a delete, not a value)."""


def copy_value(value: Any) -> Any:
    """A value equal to ``value`` that shares nothing changeable with it: ``value`` itself when it cannot
    change (a number, a string, bytes, or a tuple or frozenset of those). Dicts, lists, sets, tuples and
    bytearrays are copied by a recursion much cheaper than :func:`copy.deepcopy` (keys of a dict of plain
    keys are shared; objects appearing twice in ``value`` appear as two copies); anything else, and a value
    containing itself, is copied with :func:`copy.deepcopy`."""
    if type(value) in PLAIN:
        return value
    if type(value) is dict:  # the common case first
        try:
            return _copy_dict(value)
        except RecursionError:
            return copy.deepcopy(value)
    copier = _COPIERS.get(type(value))
    if copier is not None:
        try:
            return copier(value)
        except RecursionError:  # a value containing itself: deepcopy keeps track of what it copied
            pass
    return copy.deepcopy(value)


def _copy_dict(value: dict[Any, Any]) -> dict[Any, Any]:
    plain = PLAIN
    new = value.copy()  # in C; then the values that can change are replaced by copies (a loop, not a
    for k, v in value.items():  # comprehension: no frame of its own, which a small dict would notice)
        if type(v) not in plain:
            new[k] = copy_value(v)
        if type(k) not in plain:
            return {copy_value(k): copy_value(v) for k, v in value.items()}
    return new


def _copy_list(value: list[Any]) -> list[Any]:
    plain = PLAIN
    return [v if type(v) in plain else copy_value(v) for v in value]


def _copy_tuple(value: tuple[Any, ...]) -> tuple[Any, ...]:
    plain = PLAIN
    for v in value:
        if type(v) not in plain:
            return tuple([copy_value(v) for v in value])
    return value


def _copy_set(value: set[Any]) -> set[Any]:
    plain = PLAIN
    return {v if type(v) in plain else copy_value(v) for v in value}


def _copy_frozenset(value: frozenset[Any]) -> frozenset[Any]:
    plain = PLAIN
    for v in value:
        if type(v) not in plain:
            return frozenset([copy_value(v) for v in value])
    return value


_COPIERS: Final[dict[type, Callable[[Any], Any]]] = {
    dict: _copy_dict,
    list: _copy_list,
    tuple: _copy_tuple,
    set: _copy_set,
    frozenset: _copy_frozenset,
    bytearray: bytearray,
}


__all__ = ["PLAIN", "STORABLE_PLAIN", "copy_value"]
