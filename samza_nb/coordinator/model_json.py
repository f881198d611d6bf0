"""Samza's job model JSON for the coordinator's HTTP service and its containers (config included).

Interim: the job model gains its own ``to_json``/``from_json``; these two functions then delegate to them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.coordinator.job_model import ContainerModel, JobModel, TaskModel
from samza_nb.errors import SamzaError


def model_to_json(model: JobModel, config: Mapping[str, str]) -> str:
    """``{"config": {...}, "containers": {id: {"processor-id", "tasks": {...}}},
    "max-change-log-stream-partitions": n}`` as Samza writes it."""
    changelog = [t.changelog_partition for t in model.tasks.values()]
    data = {
        "config": dict(config),
        "containers": {
            cid: {
                "processor-id": cid,
                "tasks": {
                    name: {
                        "task-name": name,
                        "system-stream-partitions": [
                            {"system": s.system, "stream": s.stream, "partition": s.partition}
                            for s in sorted(task.ssps)
                        ],
                        "changelog-partition": task.changelog_partition,
                        "task-mode": "Active",
                    }
                    for name, task in container.tasks.items()
                },
            }
            for cid, container in model.containers.items()
        },
        "max-change-log-stream-partitions": max(changelog, default=-1) + 1,
    }
    return json.dumps(data, separators=(",", ":"))


def model_from_json(text: str | bytes, where: str = "job model") -> tuple[JobModel, dict[str, str]]:
    """The job model and config of ``text``; a SamzaError naming ``where`` when it is not a job model."""
    try:
        data = json.loads(text)
        containers: dict[str, ContainerModel] = {}
        for key, raw in data["containers"].items():
            cid = str(raw.get("processor-id", raw.get("container-id", key)))
            tasks = {name: _task(name, task) for name, task in raw["tasks"].items()}
            containers[cid] = ContainerModel(cid, tasks)
        config = {str(k): str(v) for k, v in data.get("config", {}).items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SamzaError(f"{where} is not a job model: {type(exc).__name__}: {exc}") from None
    return JobModel(containers), config


def _task(name: str, raw: Any) -> TaskModel:
    ssps = frozenset(
        SystemStreamPartition(str(s["system"]), str(s["stream"]), int(s["partition"]))
        for s in raw["system-stream-partitions"]
    )
    return TaskModel(str(raw.get("task-name", name)), ssps, int(raw["changelog-partition"]))


__all__ = ["model_from_json", "model_to_json"]
