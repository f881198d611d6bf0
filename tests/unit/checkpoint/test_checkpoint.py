"""The Checkpoint value: immutable, compared by value, readable."""

from __future__ import annotations

import copy
import pickle

import pytest

from samza_nb.api.streams import END_OF_STREAM_OFFSET, SystemStreamPartition
from samza_nb.checkpoint import Checkpoint
from samza_nb.errors import CheckpointError, SamzaError

SSP0 = SystemStreamPartition("kafka", "page-views", 0)
SSP1 = SystemStreamPartition("kafka", "page-views", 1)


def test_holds_offsets_and_changelog_offsets() -> None:
    cp = Checkpoint({SSP0: "41", SSP1: "7"}, {"counts": "12"})
    assert cp.offsets == {SSP0: "41", SSP1: "7"}
    assert cp.changelog_offsets == {"counts": "12"}
    assert Checkpoint().offsets == {}
    assert Checkpoint().changelog_offsets == {}


def test_is_a_copy_of_the_given_mappings() -> None:
    given = {SSP0: "1"}
    cp = Checkpoint(given)
    given[SSP0] = "2"
    given[SSP1] = "3"
    assert cp.offsets == {SSP0: "1"}


def test_is_immutable() -> None:
    cp = Checkpoint({SSP0: "1"}, {"s": "1"})
    with pytest.raises(TypeError):
        cp.offsets[SSP1] = "2"  # type: ignore[index]
    with pytest.raises(TypeError):
        cp.changelog_offsets["t"] = "2"  # type: ignore[index]
    with pytest.raises(AttributeError):
        cp.offsets = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        setattr(cp, "_offsets", {})  # noqa: B010
    assert cp.offsets == {SSP0: "1"}


def test_equality_and_hash_by_value_regardless_of_order() -> None:
    a = Checkpoint({SSP0: "1", SSP1: "2"}, {"s": "3"})
    b = Checkpoint({SSP1: "2", SSP0: "1"}, {"s": "3"})
    assert a == b
    assert hash(a) == hash(b)
    assert a != Checkpoint({SSP0: "1", SSP1: "2"})
    assert a != Checkpoint({SSP0: "1", SSP1: "3"}, {"s": "3"})
    assert a != {SSP0: "1", SSP1: "2"}
    assert len({a, b}) == 1


def test_repr_is_readable_and_sorted() -> None:
    cp = Checkpoint({SSP1: "7", SSP0: "41"}, {"counts": "12"})
    assert (
        repr(cp) == "Checkpoint({kafka.page-views#0: '41', kafka.page-views#1: '7'}, "
        "changelog_offsets={'counts': '12'})"
    )
    assert repr(Checkpoint()) == "Checkpoint({})"
    assert list(cp.offsets) == [SSP0, SSP1]


def test_pickles_and_copies() -> None:
    cp = Checkpoint({SSP0: "1"}, {"s": "2"})
    assert pickle.loads(pickle.dumps(cp)) == cp
    assert copy.copy(cp) == cp
    assert copy.deepcopy(cp) == cp


@pytest.mark.parametrize(
    ("offsets", "changelog", "fragment"),
    [
        ({("kafka", "x", 0): "1"}, None, "SystemStreamPartition"),
        ({SSP0: 5}, None, "kafka.page-views#0"),
        ({SSP0: ""}, None, "kafka.page-views#0"),
        ({SSP0: None}, None, "kafka.page-views#0"),
        ({SSP0: END_OF_STREAM_OFFSET}, None, "end-of-stream"),
        (None, {"": "1"}, "store name"),
        (None, {"s": 3}, "'s'"),
    ],
)
def test_rejects_invalid_contents(offsets: object, changelog: object, fragment: str) -> None:
    with pytest.raises(CheckpointError) as info:
        Checkpoint(offsets, changelog)  # type: ignore[arg-type]
    assert fragment in str(info.value)
    assert isinstance(info.value, SamzaError)
