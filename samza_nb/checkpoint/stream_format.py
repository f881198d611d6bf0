"""Checkpoints as messages of a checkpoint stream, as Samza keeps them (Kafka topic or durable log).

The stream is ``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` (``_`` → ``-`` in name and id), one
partition. One message per task checkpoint. Key: compact JSON
``{"systemstreampartition-grouper-factory": <grouper>, "taskName": <task>, "type": "checkpoint"}``.
Value: compact JSON map, Samza's layout: ``"SystemStreamPartition [<system>, <stream>, <partition>]"`` →
``{"system", "stream", "partition", "offset"}`` per input, and ``"store <name>"`` → ``{"store", "offset"}``
per store changelog. Reading the stream from its start, the last value per key wins (a null value deletes
it); checkpoints of another grouper are ignored (their task names mean other partitions).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Final

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.checkpoint import Checkpoint
from samza_nb.errors import CheckpointError

log = logging.getLogger(__name__)

GROUPER_KEY: Final[str] = "job.systemstreampartition.grouper.factory"
DEFAULT_GROUPER: Final[str] = "group-by-partition"
CHECKPOINT_TYPE: Final[str] = "checkpoint"


def checkpoint_topic(job_name: str, job_id: str) -> str:
    """``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` with ``_`` → ``-`` in name and id."""
    return f"__samza_checkpoint_ver_1_for_{job_name.replace('_', '-')}_{job_id.replace('_', '-')}"


def encode_key(task_name: str, grouper: str) -> bytes:
    """The message key of ``task_name``'s checkpoint."""
    key = {"systemstreampartition-grouper-factory": grouper, "taskName": task_name, "type": CHECKPOINT_TYPE}
    return json.dumps(key, separators=(",", ":"), sort_keys=True).encode("utf-8")


def encode_checkpoint(checkpoint: Checkpoint) -> bytes:
    """The message value of ``checkpoint``."""
    value: dict[str, dict[str, str]] = {}
    for ssp, offset in checkpoint.offsets.items():
        value[f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]"] = {
            "system": ssp.system,
            "stream": ssp.stream,
            "partition": str(ssp.partition),
            "offset": offset,
        }
    for store, offset in checkpoint.changelog_offsets.items():
        value[f"store {store}"] = {"store": store, "offset": offset}
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def decode_checkpoint(data: bytes, where: str) -> Checkpoint:
    """The checkpoint in a message value; a CheckpointError naming ``where`` when it is not one."""
    try:
        value = json.loads(data)
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        offsets: dict[SystemStreamPartition, str] = {}
        stores: dict[str, str] = {}
        for entry in value.values():
            if "store" in entry:
                stores[str(entry["store"])] = str(entry["offset"])
            else:
                ssp = SystemStreamPartition(
                    str(entry["system"]), str(entry["stream"]), int(entry["partition"])
                )
                offsets[ssp] = str(entry["offset"])
        return Checkpoint(offsets, stores)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where}: not a samza_nb checkpoint: {exc!r}") from None


def decode_key(data: bytes | None) -> dict[str, Any] | None:
    """The key as a dict, or None when it is not a checkpoint key of this format."""
    if data is None:
        return None
    try:
        key = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return key if isinstance(key, dict) else None


class CheckpointTable:
    """The task checkpoints of a checkpoint stream, built by applying its messages in order."""

    def __init__(self, stream: str, grouper: str) -> None:
        self.stream = stream
        self.grouper = grouper
        self.checkpoints: dict[str, Checkpoint] = {}

    def apply(self, raw_key: bytes | None, raw_value: bytes | None, offset: int) -> None:
        """Apply the message at ``offset``: the task's checkpoint becomes its value (None deletes it).
        Messages that are not checkpoints are skipped; another grouper's are skipped with a warning; a
        value that is not a checkpoint is a CheckpointError naming the stream and offset."""
        key = decode_key(raw_key)
        if key is None or key.get("type") != CHECKPOINT_TYPE or not isinstance(key.get("taskName"), str):
            return
        grouper = key.get("systemstreampartition-grouper-factory")
        task = key["taskName"]
        if grouper != self.grouper:
            log.warning(
                "checkpoint of task %r at offset %d of %s was written with grouper %r, not %r: ignored",
                task,
                offset,
                self.stream,
                grouper,
                self.grouper,
            )
            return
        if raw_value is None:
            self.checkpoints.pop(task, None)
        else:
            self.checkpoints[task] = decode_checkpoint(raw_value, f"{self.stream} offset {offset}")


class StreamCheckpointManager:
    """What the checkpoint managers on a checkpoint stream share: task registration, the lifecycle (new,
    started, stopped), the encoding of a write and the table of each task's last checkpoint. A subclass
    reads the stream into ``_table`` in ``start`` and implements ``_require_started``."""

    def __init__(self, stream: str, grouper: str) -> None:
        self.grouper = grouper
        self._tasks: list[str] = []
        self._table = CheckpointTable(stream, grouper)
        self._state = "new"

    def register(self, task_name: str) -> None:
        """Announce a task (before ``start``)."""
        if self._state == "stopped":
            raise CheckpointError(f"cannot register task {task_name!r}: {self} is stopped")
        if task_name not in self._tasks:
            self._tasks.append(task_name)

    def _check_new(self) -> None:
        if self._state != "new":
            raise CheckpointError(f"{self} was already started")

    def _require_started(self, what: str) -> Any:
        """The connection to write with; a CheckpointError naming ``what`` unless started."""
        raise NotImplementedError

    def _not_started(self, what: str) -> CheckpointError:
        return CheckpointError(f"{what} called on {self} (start it first; a stopped one cannot be reused)")

    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The last checkpoint of ``task_name`` on the stream (as read at start, or written since)."""
        self._require_started("read_last_checkpoint")
        return self._table.checkpoints.get(task_name)

    def _message(self, task_name: str, checkpoint: Checkpoint) -> tuple[bytes, bytes]:
        """The key and value of a write of ``checkpoint``; a CheckpointError when it is not one."""
        if not isinstance(checkpoint, Checkpoint):
            raise CheckpointError(
                f"write_checkpoint of task {task_name!r} needs a Checkpoint, got {checkpoint!r}"
            )
        return encode_key(task_name, self.grouper), encode_checkpoint(checkpoint)


__all__ = [
    "CHECKPOINT_TYPE",
    "DEFAULT_GROUPER",
    "GROUPER_KEY",
    "CheckpointTable",
    "StreamCheckpointManager",
    "checkpoint_topic",
    "decode_checkpoint",
    "decode_key",
    "encode_checkpoint",
    "encode_key",
]
