"""Ports of Samza's TestOffsetManager scenarios (starting offsets, docs/architecture.md §3, rule 10)."""

from __future__ import annotations

import pytest

from samza_nb import Config, ConfigError, SamzaError, SystemStream, SystemStreamPartition
from samza_nb.api.metadata import SSPMetadata
from samza_nb.checkpoint import Checkpoint
from samza_nb.container.offsets import OffsetManager

STREAM = SystemStream("test-system", "test-stream")
SSP = SystemStreamPartition("test-system", "test-stream", 0)
SSP1 = SystemStreamPartition("test-system", "test-stream", 1)


class Admin:
    def offset_after(self, offset: str) -> str:
        return str(int(offset) + 1)

    def offset_comparator(self, a: str, b: str) -> int:
        return (int(a) > int(b)) - (int(a) < int(b))


def manager(config: dict[str, str] | None = None, metadata=None, streams=(STREAM,)) -> OffsetManager:
    meta = metadata if metadata is not None else {SSP: SSPMetadata("0", "1", "2")}
    return OffsetManager(Config(config or {}), {"test-system": Admin()}, meta, streams)


def test_without_checkpoint_the_system_default_applies() -> None:
    om = manager({"systems.test-system.samza.offset.default": "oldest"})
    assert om.last_processed([SSP], None) == {}
    assert om.starting_offsets([SSP], None) == {SSP: "0"}


def test_default_is_upcoming() -> None:
    assert manager().starting_offsets([SSP], None) == {SSP: "2"}


def test_newest_starts_at_the_last_existing_message() -> None:
    om = manager({"systems.test-system.samza.offset.default": "newest"})
    assert om.starting_offsets([SSP], None) == {SSP: "1"}


def test_stream_default_overrides_the_system_default() -> None:
    om = manager(
        {
            "systems.test-system.samza.offset.default": "upcoming",
            "systems.test-system.streams.test-stream.samza.offset.default": "oldest",
        }
    )
    assert om.starting_offsets([SSP], None) == {SSP: "0"}


def test_a_checkpoint_starts_after_the_checkpointed_offset() -> None:
    om = manager({"systems.test-system.samza.offset.default": "oldest"})
    checkpoint = Checkpoint({SSP: "45"})
    assert om.last_processed([SSP], checkpoint) == {SSP: "45"}
    assert om.starting_offsets([SSP], checkpoint) == {SSP: "46"}


def test_reset_offset_ignores_the_checkpoint() -> None:
    om = manager(
        {
            "systems.test-system.samza.offset.default": "oldest",
            "systems.test-system.streams.test-stream.samza.reset.offset": "true",
        }
    )
    checkpoint = Checkpoint({SSP: "45"})
    assert om.last_processed([SSP], checkpoint) == {}
    assert om.starting_offsets([SSP], checkpoint) == {SSP: "0"}


def test_tasks_without_checkpoint_use_the_default_beside_ones_with() -> None:
    metadata = {SSP: SSPMetadata("0", "1", "2"), SSP1: SSPMetadata("3", "4", "5")}
    om = manager(metadata=metadata)
    assert om.starting_offsets([SSP], Checkpoint({SSP: "45"})) == {SSP: "46"}
    assert om.starting_offsets([SSP1], None) == {SSP1: "5"}


def test_missing_metadata_is_an_error_naming_the_partition() -> None:
    om = manager(metadata={})
    with pytest.raises(SamzaError, match=r"test-system\.test-stream#0"):
        om.starting_offsets([SSP], None)


@pytest.mark.parametrize(
    "key",
    [
        "systems.test-system.samza.offset.default",
        "systems.test-system.streams.test-stream.samza.offset.default",
    ],
)
def test_an_invalid_default_fails_at_construction_naming_the_key(key: str) -> None:
    with pytest.raises(ConfigError, match="oldest, upcoming, newest") as info:
        manager({key: "fail"})
    assert info.value.key == key
    assert "fail" in str(info.value)


def test_an_invalid_reset_flag_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        manager({"systems.test-system.streams.test-stream.samza.reset.offset": "maybe"})
    assert info.value.key == "systems.test-system.streams.test-stream.samza.reset.offset"


def test_checkpointed_streams_that_are_no_longer_inputs_are_dropped() -> None:
    old = SystemStreamPartition("test-system-1", "gone", 0)
    om = manager()
    assert om.last_processed([SSP], Checkpoint({SSP: "7", old: "9"})) == {SSP: "7"}


def test_an_empty_partition_falls_back_to_upcoming() -> None:
    om = manager(
        {"systems.test-system.samza.offset.default": "oldest"}, metadata={SSP: SSPMetadata(None, None, "13")}
    )
    assert om.starting_offsets([SSP], None) == {SSP: "13"}
