"""Kafka checkpoint topic messages (Samza's key and v1/v2 values) as the checkpoint table reads them: a key
that is not a checkpoint key is skipped, a value that is not a checkpoint is a CheckpointError naming the
stream and offset; nothing else escapes. What the format writes (any task, inputs, stores) reads back."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.checkpoint.samza_serdes import CHECKPOINT_V1_TYPE, CHECKPOINT_V2_TYPE, CheckpointKey
from samza_nb.checkpoint.stream_format import CheckpointFormat, CheckpointTable
from samza_nb.errors import CheckpointError
from tests.fuzz.budget import fuzz, parses, valid_inputs
from tests.fuzz.strategies import DEEP_LIST, DEEP_OBJECT, any_bytes, json_values
from tests.fuzz.valid import checkpoints

FORMAT = CheckpointFormat(
    read_versions=(2, 1), changelogs={"counts": SystemStream("kafka", "counts-changelog")}
)


def table() -> CheckpointTable:
    return CheckpointTable("__samza_checkpoint_ver_1_for_j_1", FORMAT)


GOOD = {
    kind: value
    for (_, value), kind in zip(
        CheckpointFormat(write_versions=(1, 2)).encode(
            "Partition 0", Checkpoint({SystemStreamPartition("kafka", "in", 0): "5"})
        ),
        [CHECKPOINT_V1_TYPE, CHECKPOINT_V2_TYPE],
        strict=True,
    )
}
"""A v1 and a v2 value of one checkpoint, as the format writes them."""


def key_of(kind: str) -> bytes:
    return CheckpointKey(kind, "Partition 0", FORMAT.grouper).encode()


@fuzz
@given(key=st.one_of(st.none(), any_bytes))
@example(key=DEEP_LIST)
@example(key=DEEP_OBJECT)
def test_checkpoint_key(key: bytes | None) -> None:
    assert parses(CheckpointKey.decode, key) is None or key is not None


@pytest.mark.parametrize("kind", [CHECKPOINT_V1_TYPE, CHECKPOINT_V2_TYPE])
@fuzz
@given(value=st.one_of(any_bytes, st.none()))
@example(value=DEEP_LIST)
@example(value=DEEP_OBJECT)
def test_checkpoint_value(kind: str, value: bytes | None) -> None:
    """A value that is not a checkpoint leaves the table as it was (the task keeps its last checkpoint)."""
    checkpoints = table()
    checkpoints.apply(key_of(kind), GOOD[kind], offset=6)
    before = checkpoints.checkpoints
    assert before, "the good checkpoint was read"
    try:
        checkpoints.apply(key_of(kind), value, offset=7)
    except CheckpointError as exc:
        assert "offset 7" in str(exc)
        assert checkpoints.checkpoints == before


@fuzz
@given(entries=st.dictionaries(st.text(max_size=30), json_values, max_size=4))
def test_checkpoint_v1_entries(entries: dict[str, object]) -> None:
    """v1 values shaped like Samza's: SSP names mapping to objects with system/stream/partition/offset."""
    value = dict(entries)
    changelog = {"system": "kafka", "stream": "counts-changelog", "partition": "0"}
    value["SystemStreamPartition [kafka, counts-changelog, 0]"] = changelog | {"offset": entries.get("o")}
    try:
        table().apply(key_of(CHECKPOINT_V1_TYPE), json.dumps(value).encode(), offset=7)
    except CheckpointError as exc:
        assert "offset 7" in str(exc)


@fuzz
@given(inputs=json_values, markers=json_values, checkpoint_id=json_values)
def test_checkpoint_v2_fields(inputs: object, markers: object, checkpoint_id: object) -> None:
    """v2 values with Samza's fields holding anything."""
    value = {"checkpoint-id": checkpoint_id, "input-offsets": inputs, "state-checkpoint-markers": markers}
    try:
        table().apply(key_of(CHECKPOINT_V2_TYPE), json.dumps(value).encode(), offset=7)
    except CheckpointError as exc:
        assert "offset 7" in str(exc)


# -- valid inputs: what the format writes reads back -------------------------------------------------


@valid_inputs
@given(key=st.builds(CheckpointKey, st.text(max_size=20), st.text(max_size=20), st.text(max_size=40)))
def test_valid_checkpoint_keys_round_trip(key: CheckpointKey) -> None:
    assert CheckpointKey.decode(key.encode()) == key


@pytest.mark.parametrize("version", [1, 2])
@valid_inputs
@given(task=st.text(max_size=20), written=checkpoints())
def test_valid_checkpoints_round_trip(
    version: int, task: str, written: tuple[Checkpoint, dict[str, SystemStream]]
) -> None:
    """A checkpoint written in version 1 or 2 (inputs, stores' changelog partitions and offsets) is read
    back by the checkpoint table as the same checkpoint."""
    checkpoint, changelogs = written
    versions = (version,)
    checkpoint_format = CheckpointFormat(
        write_versions=versions, read_versions=versions, changelogs=changelogs
    )
    read = CheckpointTable("__samza_checkpoint_ver_1_for_j_1", checkpoint_format)
    for offset, (key, value) in enumerate(checkpoint_format.encode(task, checkpoint)):
        read.apply(key, value, offset=offset)
    assert read.checkpoints == {task: checkpoint}
    assert dict(read.checkpoints[task].changelog_ssps) == dict(checkpoint.changelog_ssps)
