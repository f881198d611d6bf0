"""The job model's values: which containers run which tasks, which input partitions each task reads, and
which changelog partition holds each task's stores; with Samza's JSON form (what the job coordinator serves).

Plain values beside the stream identities they are built from, so the container and the storage layer that
run a model name no coordinator; the coordinator computes models (``coordinator/planning.py``).

JSON (compact, as Samza's object mapper writes it)::

    {"config": {...},
     "containers": {"0": {"processor-id": "0",
                          "tasks": {"Partition 0": {"task-name": "Partition 0",
                                                    "system-stream-partitions": [
                                                        {"system": s, "stream": t, "partition": 0}],
                                                    "changelog-partition": 0,
                                                    "task-mode": "Active"}}}},
     "max-change-log-stream-partitions": n}

Reading ignores unknown fields, takes ``container-id`` where older Samza wrote it instead of
``processor-id``, and a missing or empty ``task-mode`` as ``Active``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError

ACTIVE = "Active"
"""The task mode of every task samza_nb builds (Samza also knows standby tasks)."""


@dataclass(frozen=True)
class TaskModel:
    """A task: its name, input partitions, changelog partition and mode."""

    name: str
    ssps: frozenset[SystemStreamPartition]
    changelog_partition: int
    mode: str = ACTIVE


@dataclass(frozen=True)
class ContainerModel:
    """A container: its id and its tasks by name."""

    id: str
    tasks: Mapping[str, TaskModel] = field(default_factory=dict)


@dataclass(frozen=True)
class JobModel:
    """Containers by id (every task in exactly one) and the job's config. Equal when containers and config
    are."""

    containers: Mapping[str, ContainerModel]
    config: Mapping[str, str] = field(default_factory=dict)

    @property
    def tasks(self) -> dict[str, TaskModel]:
        """Every task of the job by name."""
        return {name: task for c in self.containers.values() for name, task in c.tasks.items()}

    @property
    def max_changelog_partitions(self) -> int:
        """The highest changelog partition of any task + 1 (0 without tasks): the partitions a changelog of
        this job needs."""
        return max(
            (t.changelog_partition + 1 for c in self.containers.values() for t in c.tasks.values()), default=0
        )

    def to_json(self) -> str:
        """The model as Samza's compact JSON (see the module docstring)."""
        document = {
            "config": dict(self.config),
            "containers": {
                cid: {
                    "processor-id": container.id,
                    "tasks": {name: _task_json(task) for name, task in container.tasks.items()},
                }
                for cid, container in self.containers.items()
            },
            "max-change-log-stream-partitions": self.max_changelog_partitions,
        }
        return json.dumps(document, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> JobModel:
        """The model in ``text`` (Samza's JSON); a SamzaError saying what is missing or malformed."""
        try:
            document = json.loads(text)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: nested too deep
            raise SamzaError(f"job model JSON: not JSON: {exc}") from None
        doc = _object(document, "the job model")
        config = {
            str(k): _config_value(k, v) for k, v in _object(doc.get("config") or {}, '"config"').items()
        }
        containers: dict[str, ContainerModel] = {}
        for cid, raw in _object(doc.get("containers") or {}, '"containers"').items():
            containers[cid] = _container_from_json(cid, _object(raw, f"container {cid!r}"))
        return cls(containers, config)


def _task_json(task: TaskModel) -> dict[str, Any]:
    return {
        "task-name": task.name,
        "system-stream-partitions": [
            {"system": ssp.system, "stream": ssp.stream, "partition": ssp.partition}
            for ssp in sorted(task.ssps)
        ],
        "changelog-partition": task.changelog_partition,
        "task-mode": task.mode,
    }


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SamzaError(f"job model JSON: {what} is not a JSON object: {value!r:.80}")
    return value


def _config_value(key: str, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise SamzaError(f"job model JSON: config {key!r} is {value!r:.80}, not a string")


def _container_from_json(cid: str, raw: dict[str, Any]) -> ContainerModel:
    processor_id = raw.get("processor-id")
    if processor_id is None:
        processor_id = raw.get("container-id")  # older Samza: an int
    if processor_id is None or isinstance(processor_id, (bool, dict, list)):
        raise SamzaError(f"job model JSON: container {cid!r} has neither processor-id nor container-id")
    tasks: dict[str, TaskModel] = {}
    for name, task in _object(raw.get("tasks") or {}, f"the tasks of container {cid!r}").items():
        tasks[name] = _task_from_json(name, _object(task, f"task {name!r}"))
    return ContainerModel(str(processor_id), tasks)


def _task_from_json(key: str, raw: dict[str, Any]) -> TaskModel:
    name = raw.get("task-name", key)
    where = f"job model JSON: task {name!r}"
    ssps = []
    items = raw.get("system-stream-partitions") or []
    if not isinstance(items, list):
        raise SamzaError(f"{where}: system-stream-partitions {items!r:.80} is not a JSON list")
    for item in items:
        try:
            ssps.append(SystemStreamPartition(item["system"], item["stream"], item["partition"]))
        except (KeyError, TypeError) as exc:
            raise SamzaError(f"{where}: {item!r:.80} is not a system stream partition ({exc})") from None
    changelog = raw.get("changelog-partition")
    if not isinstance(changelog, int) or isinstance(changelog, bool) or changelog < 0:
        raise SamzaError(f"{where}: changelog-partition {changelog!r} is not an integer >= 0")
    mode = raw.get("task-mode") or ACTIVE
    return TaskModel(str(name), frozenset(ssps), changelog, str(mode))


__all__ = ["ACTIVE", "ContainerModel", "JobModel", "TaskModel"]
