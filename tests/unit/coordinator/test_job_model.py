"""The job model: Samza's TestGroupByContainerCount (round robin in string order), changelog partition
mapping (JobModelCalculator) and JSON (TestSamzaObjectMapper)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from samza_nb import SystemStreamPartition
from samza_nb.coordinator import ContainerModel, GroupByPartition, JobModel, TaskModel, build_job_model
from samza_nb.errors import ConfigError, SamzaError

SSP = SystemStreamPartition


def groups(count: int) -> dict[str, frozenset[SystemStreamPartition]]:
    """Tasks "Partition 0".."Partition count-1", each reading its partition of System.Stream."""
    return GroupByPartition().group(SSP("System", "Stream", p) for p in range(count))


def tasks_of(model: JobModel, container: str) -> set[str]:
    return set(model.containers[container].tasks)


# -- TestGroupByContainerCount -------------------------------------------------------------------------------
def test_no_tasks_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="job.container.count"):
        build_job_model({}, 1)


def test_fewer_tasks_than_containers_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="job.container.count=2 but the job has only 1 tasks") as caught:
        build_job_model(groups(1), 2)
    assert caught.value.key == "job.container.count"


def test_tasks_are_dealt_round_robin() -> None:
    model = build_job_model(groups(5), 2)
    assert list(model.containers) == ["0", "1"]
    assert [c.id for c in model.containers.values()] == ["0", "1"]
    assert tasks_of(model, "0") == {"Partition 0", "Partition 2", "Partition 4"}
    assert tasks_of(model, "1") == {"Partition 1", "Partition 3"}


def test_many_tasks_are_dealt_in_string_order() -> None:
    model = build_job_model(groups(21), 2)
    assert tasks_of(model, "0") == {f"Partition {n}" for n in (0, 10, 12, 14, 16, 18, 2, 3, 5, 7, 9)}
    assert tasks_of(model, "1") == {f"Partition {n}" for n in (1, 11, 13, 15, 17, 19, 20, 4, 6, 8)}
    assert list(model.containers["0"].tasks)[:3] == ["Partition 0", "Partition 10", "Partition 12"]


def test_every_task_and_partition_is_in_exactly_one_container() -> None:
    model = build_job_model(groups(7), 3)
    assert sorted(model.tasks) == sorted(groups(7))
    assert sum(len(c.tasks) for c in model.containers.values()) == 7
    assert model.tasks["Partition 6"].ssps == frozenset({SSP("System", "Stream", 6)})


# -- changelog partitions ------------------------------------------------------------------------------------
def test_a_new_job_numbers_changelog_partitions_in_string_order() -> None:
    model = build_job_model(groups(12), 1)
    order = sorted(f"Partition {n}" for n in range(12))
    assert {name: model.tasks[name].changelog_partition for name in order} == {
        name: index for index, name in enumerate(order)
    }
    assert model.tasks["Partition 10"].changelog_partition == 2
    assert model.max_changelog_partitions == 12


def test_existing_changelog_mappings_are_kept_and_new_tasks_get_max_plus_one() -> None:
    previous = {"Partition 0": 3, "Partition 1": 0, "Partition 2": 1}
    model = build_job_model(groups(5), 2, previous)
    partitions = {name: task.changelog_partition for name, task in model.tasks.items()}
    assert partitions == {
        "Partition 0": 3,
        "Partition 1": 0,
        "Partition 2": 1,
        "Partition 3": 4,
        "Partition 4": 5,
    }
    assert model.max_changelog_partitions == 6


def test_mappings_of_vanished_tasks_still_reserve_their_partitions() -> None:
    model = build_job_model(groups(2), 1, {"Partition 0": 0, "Partition 7": 7})
    assert model.tasks["Partition 1"].changelog_partition == 8


# -- JSON ----------------------------------------------------------------------------------------------------
def samza_model() -> JobModel:
    task = TaskModel("test", frozenset({SSP("foo", "bar", 1)}), 2)
    return JobModel({"1": ContainerModel("1", {"test": task})}, {"a": "b"})


def samza_json() -> dict[str, Any]:
    return {
        "config": {"a": "b"},
        "containers": {
            "1": {
                "processor-id": "1",
                "tasks": {
                    "test": {
                        "task-name": "test",
                        "system-stream-partitions": [{"system": "foo", "stream": "bar", "partition": 1}],
                        "changelog-partition": 2,
                        "task-mode": "Active",
                    }
                },
            }
        },
        "max-change-log-stream-partitions": 3,
    }


def test_serialize_job_model() -> None:
    text = samza_model().to_json()
    assert json.loads(text) == samza_json()
    assert " " not in text.replace("Partition ", "")


def test_deserialize_job_model() -> None:
    assert JobModel.from_json(json.dumps(samza_json())) == samza_model()


def test_a_built_model_round_trips_with_its_config() -> None:
    model = build_job_model(groups(4), 2, config={"job.name": "clicks", "task.inputs": "kafka.clicks"})
    again = JobModel.from_json(model.to_json())
    assert again == model
    assert again.config == {"job.name": "clicks", "task.inputs": "kafka.clicks"}
    assert again.max_changelog_partitions == 4
    assert json.loads(model.to_json())["containers"]["1"]["processor-id"] == "1"


def test_unknown_fields_are_ignored() -> None:
    document = samza_json()
    document["unknown_job_model_key"] = "unknown_job_model_value"
    document["task-partition-mappings"] = {"1": None}
    document["all-container-locality"] = {"1": None}
    document["containers"]["1"]["unknown_container_model_key"] = "x"
    document["containers"]["1"]["tasks"]["test"]["unknown_task_model_key"] = "y"
    document["containers"]["1"]["tasks"]["test"]["system-stream-partitions"][0]["keyBucket"] = -1
    assert JobModel.from_json(json.dumps(document)) == samza_model()


def test_processor_id_wins_over_container_id() -> None:
    document = samza_json()
    document["containers"]["1"]["container-id"] = 123
    assert JobModel.from_json(json.dumps(document)) == samza_model()


def test_container_id_is_the_fallback_for_processor_id() -> None:
    document = samza_json()
    del document["containers"]["1"]["processor-id"]
    document["containers"]["1"]["container-id"] = 1
    assert JobModel.from_json(json.dumps(document)) == samza_model()


@pytest.mark.parametrize("replacement", [None, {"id": 1}])
def test_a_container_without_processor_id_or_container_id_is_an_error(
    replacement: dict[str, int] | None,
) -> None:
    document = samza_json()
    del document["containers"]["1"]["processor-id"]
    document["containers"]["1"].update(replacement or {})
    with pytest.raises(SamzaError, match="container '1' has neither processor-id nor container-id"):
        JobModel.from_json(json.dumps(document))


def test_a_task_without_mode_is_active() -> None:
    text = '{"task-name":"Partition 0","system-stream-partitions":[],"changelog-partition":0}'
    document = {"containers": {"0": {"processor-id": "0", "tasks": {"Partition 0": json.loads(text)}}}}
    model = JobModel.from_json(json.dumps(document))
    assert model.tasks["Partition 0"] == TaskModel("Partition 0", frozenset(), 0, "Active")
    assert model.config == {}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{nope", "not JSON"),
        ("[]", "the job model is not a JSON object"),
        (
            '{"containers": {"0": {"processor-id": "0", "tasks": {"t": {"changelog-partition": "x"}}}}}',
            "changelog",
        ),
        (
            '{"containers": {"0": {"processor-id": "0", "tasks": {"t": {"changelog-partition": 0, '
            '"system-stream-partitions": [{"system": "s"}]}}}}}',
            "not a system stream partition",
        ),
    ],
)
def test_malformed_json_is_a_clear_error(text: str, problem: str) -> None:
    with pytest.raises(SamzaError, match=problem):
        JobModel.from_json(text)
