"""The Checkpoint value: what a task has durably processed, per input partition and per store changelog."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NoReturn

from samza_nb.api.streams import END_OF_STREAM_OFFSET, SystemStreamPartition
from samza_nb.errors import CheckpointError


class Checkpoint:
    """An immutable snapshot of a task's progress.

    ``offsets`` maps each input :class:`SystemStreamPartition` to the offset (a string) of the last message
    the task processed and released there; a restart resumes at the message after it. ``changelog_offsets``
    maps a store name to the offset of its changelog that the store's contents correspond to.
    ``changelog_ssps`` maps a store name to its changelog's partition (the task's), where that offset lives:
    Samza's checkpoint format keys a store's offset by it. It says where, not how far: it is not part of a
    checkpoint's equality (a checkpoint manager that keeps no SSPs reads back an equal checkpoint).

    Promises: both mappings are read-only copies of what was given (later changes to the caller's dicts do
    not leak in), iterate in sorted key order, and never contain the end-of-stream offset (end-of-stream is
    never checkpointed). Two checkpoints are equal when their mappings are equal; a checkpoint is hashable
    and picklable. Invalid keys or values raise :class:`CheckpointError` naming them.
    """

    __slots__ = ("_changelog_offsets", "_changelog_ssps", "_offsets")

    _offsets: Mapping[SystemStreamPartition, str]
    _changelog_offsets: Mapping[str, str]
    _changelog_ssps: Mapping[str, SystemStreamPartition]

    def __init__(
        self,
        offsets: Mapping[SystemStreamPartition, str] | None = None,
        changelog_offsets: Mapping[str, str] | None = None,
        changelog_ssps: Mapping[str, SystemStreamPartition] | None = None,
    ) -> None:
        checked: dict[SystemStreamPartition, str] = {}
        for ssp, offset in (offsets or {}).items():
            if not isinstance(ssp, SystemStreamPartition):
                raise CheckpointError(
                    f"checkpoint offsets must be keyed by SystemStreamPartition, got {ssp!r}"
                )
            _check_offset(f"input {ssp}", offset)
            if offset == END_OF_STREAM_OFFSET:
                raise CheckpointError(
                    f"end-of-stream is never checkpointed, but input {ssp} was given offset {offset!r}"
                )
            checked[ssp] = offset
        stores: dict[str, str] = {}
        for store, offset in (changelog_offsets or {}).items():
            if not isinstance(store, str) or not store:
                raise CheckpointError(f"changelog offsets must be keyed by store name, got {store!r}")
            _check_offset(f"store {store!r}", offset)
            stores[store] = offset
        ssps: dict[str, SystemStreamPartition] = {}
        for store, ssp in (changelog_ssps or {}).items():
            if not isinstance(store, str) or not store or not isinstance(ssp, SystemStreamPartition):
                raise CheckpointError(
                    f"changelog SSPs must map store names to SystemStreamPartitions, got {store!r}: {ssp!r}"
                )
            ssps[store] = ssp
        object.__setattr__(self, "_changelog_ssps", MappingProxyType(dict(sorted(ssps.items()))))
        object.__setattr__(self, "_offsets", MappingProxyType(dict(sorted(checked.items()))))
        object.__setattr__(self, "_changelog_offsets", MappingProxyType(dict(sorted(stores.items()))))

    @property
    def offsets(self) -> Mapping[SystemStreamPartition, str]:
        """Read-only map: input SSP → offset of the last processed message."""
        return self._offsets

    @property
    def changelog_offsets(self) -> Mapping[str, str]:
        """Read-only map: store name → changelog offset matching the store's committed contents."""
        return self._changelog_offsets

    @property
    def changelog_ssps(self) -> Mapping[str, SystemStreamPartition]:
        """Read-only map: store name → its changelog's partition (empty when not known)."""
        return self._changelog_ssps

    def __setattr__(self, name: str, value: Any) -> NoReturn:
        raise AttributeError(f"Checkpoint is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"Checkpoint is immutable; cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Checkpoint):
            return NotImplemented
        return dict(self._offsets) == dict(other._offsets) and dict(self._changelog_offsets) == dict(
            other._changelog_offsets
        )

    def __hash__(self) -> int:
        return hash((frozenset(self._offsets.items()), frozenset(self._changelog_offsets.items())))

    def __repr__(self) -> str:
        inputs = ", ".join(f"{ssp}: {offset!r}" for ssp, offset in self._offsets.items())
        text = f"Checkpoint({{{inputs}}}"
        if self._changelog_offsets:
            text += f", changelog_offsets={dict(self._changelog_offsets)!r}"
        return text + ")"

    def __reduce__(
        self,
    ) -> tuple[
        type[Checkpoint],
        tuple[dict[SystemStreamPartition, str], dict[str, str], dict[str, SystemStreamPartition]],
    ]:
        return (Checkpoint, (dict(self._offsets), dict(self._changelog_offsets), dict(self._changelog_ssps)))

    def __copy__(self) -> Checkpoint:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Checkpoint:
        return self


def _check_offset(what: str, offset: object) -> None:
    if not isinstance(offset, str) or not offset:
        raise CheckpointError(f"checkpoint offset of {what} must be a non-empty string, got {offset!r}")


__all__ = ["Checkpoint"]
