"""Groupers: Samza's TestGroupByPartition and TestGroupBySystemStreamPartition, and task.broadcast.inputs."""

from __future__ import annotations

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.coordinator import (
    GroupByPartition,
    GroupBySystemStreamPartition,
    grouper_for,
    parse_broadcast_inputs,
)
from samza_nb.errors import ConfigError

SSP = SystemStreamPartition
aa0, aa1, aa2 = SSP("SystemA", "StreamA", 0), SSP("SystemA", "StreamA", 1), SSP("SystemA", "StreamA", 2)
ab1, ab2, ac0 = SSP("SystemA", "StreamB", 1), SSP("SystemA", "StreamB", 2), SSP("SystemA", "StreamB", 0)


def name(ssp: SystemStreamPartition) -> str:
    return f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]"


# -- TestGroupByPartition ----------------------------------------------------------------------------------
def test_group_by_partition_groups_local_streams() -> None:
    grouper = GroupByPartition()
    assert grouper.group([]) == {}
    assert grouper.group([aa0, aa1, aa2, ab1, ab2, ac0]) == {
        "Partition 0": frozenset({aa0, ac0}),
        "Partition 1": frozenset({aa1, ab1}),
        "Partition 2": frozenset({aa2, ab2}),
    }


def test_group_by_partition_adds_broadcast_streams_to_every_task() -> None:
    config = Config({"task.broadcast.inputs": "SystemA.StreamA#0, SystemA.StreamB#1"})
    grouper = grouper_for(config)
    assert isinstance(grouper, GroupByPartition)
    assert grouper.group([aa0, aa1, aa2, ab1, ab2, ac0]) == {
        "Partition 0": frozenset({aa0, ac0, ab1}),
        "Partition 1": frozenset({aa1, aa0, ab1}),
        "Partition 2": frozenset({aa2, aa0, ab2, ab1}),
    }


def test_no_task_only_contains_broadcast_streams() -> None:
    grouper = GroupByPartition(
        parse_broadcast_inputs({"task.broadcast.inputs": "SystemA.StreamA#0, SystemA.StreamB#1"})
    )
    assert grouper.group([aa0, ab1, ab2]) == {"Partition 2": frozenset({aa0, ab1, ab2})}


# -- TestGroupBySystemStreamPartition -----------------------------------------------------------------------
def test_group_by_ssp_groups_local_streams() -> None:
    grouper = grouper_for({"job.systemstreampartition.grouper.factory": "group-by-ssp"})
    assert isinstance(grouper, GroupBySystemStreamPartition)
    assert grouper.group([]) == {}
    assert grouper.group([aa0, aa1, aa2, ac0]) == {
        name(aa0): frozenset({aa0}),
        name(aa1): frozenset({aa1}),
        name(aa2): frozenset({aa2}),
        name(ac0): frozenset({ac0}),
    }
    assert name(aa0) == "SystemStreamPartition [SystemA, StreamA, 0]"


def test_group_by_ssp_adds_broadcast_streams_to_every_task() -> None:
    grouper = GroupBySystemStreamPartition(frozenset({aa0}))
    assert grouper.group([aa0, aa1, aa2, ac0]) == {
        name(aa1): frozenset({aa1, aa0}),
        name(aa2): frozenset({aa2, aa0}),
        name(ac0): frozenset({ac0, aa0}),
    }


# -- task.broadcast.inputs ------------------------------------------------------------------------------
def test_broadcast_inputs_take_partitions_and_ranges() -> None:
    config = {"task.broadcast.inputs": "kafka.rates#[0-2], log.dims.v2#7 ,kafka.rates#2"}
    assert parse_broadcast_inputs(config) == {
        SSP("kafka", "rates", 0),
        SSP("kafka", "rates", 1),
        SSP("kafka", "rates", 2),
        SSP("log", "dims.v2", 7),
    }
    assert parse_broadcast_inputs({}) == frozenset()
    assert parse_broadcast_inputs({"task.broadcast.inputs": "kafka.rates#[3-1]"}) == frozenset()


@pytest.mark.parametrize(
    "item",
    [
        "kafka.rates",
        "kafka#0",
        ".rates#0",
        "kafka.rates#x",
        "kafka.rates#[1-]",
        "kafka.rates#-1",
        "kafka.rates#[0-2",
    ],
)
def test_bad_broadcast_inputs_name_the_key_and_the_item(item: str) -> None:
    with pytest.raises(ConfigError, match="task.broadcast.inputs") as caught:
        grouper_for({"task.broadcast.inputs": f"kafka.ok#0, {item}"})
    assert repr(item) in str(caught.value)
    assert caught.value.key == "task.broadcast.inputs"


def test_an_unknown_grouper_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="group-by-partition, group-by-ssp") as caught:
        grouper_for({"job.systemstreampartition.grouper.factory": "group-by-moon"})
    assert caught.value.key == "job.systemstreampartition.grouper.factory"
