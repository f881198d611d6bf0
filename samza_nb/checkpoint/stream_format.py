"""Checkpoints as messages of a checkpoint stream, as Apache Samza keeps them (Kafka topic or durable log).

The stream is ``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` (``_`` → ``-`` in name and id), one
partition, holding Samza's messages byte for byte (:mod:`samza_nb.checkpoint.samza_serdes`): so a Java
Samza job and samza_nb can take over each other's checkpoint topic.

Writing: each checkpoint is written once per version of ``task.checkpoint.write.versions`` (default
``1,2``, as Samza), v1 first. The key names the grouper by Samza's factory class name. A store's changelog
offset is keyed by its changelog's SSP (v1: an entry ``"<checkpointId>:<offset>"``; v2: a Kafka state
checkpoint marker), so a checkpoint with a changelog offset must carry its store's changelog SSP.

Reading, from the stream's start: only key types of the versions in ``task.checkpoint.read.versions``
(default ``1``, as Samza) count. Per task, a later message replaces the one held when its version has at
least the held one's priority (earlier in the list), or when it was written more than
``task.live.checkpoint.max.age`` ms (default 600000) after it (when the stream keeps timestamps); a null
value deletes. A v1 entry whose stream is a configured store's changelog is that store's offset; every
other entry is an input offset. Checkpoints of another grouper are skipped with a warning (their task
names mean other partitions); a grouper's short name (samza_nb before it wrote Samza's format) and class
name are the same grouper, and the ``"store <name>"`` entries samza_nb wrote then are read as that store's
changelog offset (migration: the next commit writes Samza's format). A value that cannot be parsed is a
CheckpointError naming the stream, the offset and the task: never a silent restart from
``offset.default``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.checkpoint.samza_serdes import (
    KAFKA_STATE_BACKEND,
    KEY_TYPE_VERSIONS,
    VERSION_KEY_TYPES,
    CheckpointKey,
    decode_changelog_offset,
    decode_marker,
    decode_v1,
    decode_v2,
    encode_v1,
    encode_v2,
    new_checkpoint_id,
)
from samza_nb.config.grouper_names import (
    DEFAULT_GROUPER,
    GROUPER_KEY,
    grouper_class_name,
    short_grouper_name,
)
from samza_nb.config.stores import changelog_stream, configured_store_names
from samza_nb.errors import CheckpointError, ConfigError

if TYPE_CHECKING:
    from samza_nb.config.config import Config

log = logging.getLogger(__name__)

WRITE_VERSIONS_KEY: Final[str] = "task.checkpoint.write.versions"
READ_VERSIONS_KEY: Final[str] = "task.checkpoint.read.versions"
MAX_AGE_KEY: Final[str] = "task.live.checkpoint.max.age"
DEFAULT_WRITE_VERSIONS: Final[tuple[int, ...]] = (1, 2)
DEFAULT_READ_VERSIONS: Final[tuple[int, ...]] = (1,)
DEFAULT_MAX_AGE_MS: Final[int] = 600_000


def checkpoint_topic(job_name: str, job_id: str) -> str:
    """``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` with ``_`` → ``-`` in name and id."""
    return f"__samza_checkpoint_ver_1_for_{job_name.replace('_', '-')}_{job_id.replace('_', '-')}"


def _versions(config: Config, key: str, default: tuple[int, ...]) -> tuple[int, ...]:
    raw = config.get_str(key)
    if raw is None:
        return default
    items = [item.strip() for item in raw.split(",") if item.strip()]
    if not items or any(item not in ("1", "2") for item in items) or len(set(items)) != len(items):
        raise ConfigError(
            f"{key}={raw!r} is not valid: expected checkpoint versions 1 and/or 2, comma-separated "
            "(each once)",
            key=key,
        )
    return tuple(int(item) for item in items)


@dataclass(frozen=True)
class CheckpointFormat:
    """How a job's checkpoints are written and read (see the module docstring): the grouper's class name,
    the versions written and read (in priority order), the live checkpoint max age, and each store's
    changelog stream (store → stream)."""

    grouper: str = grouper_class_name(DEFAULT_GROUPER)
    write_versions: tuple[int, ...] = DEFAULT_WRITE_VERSIONS
    read_versions: tuple[int, ...] = DEFAULT_READ_VERSIONS
    max_age_ms: int = DEFAULT_MAX_AGE_MS
    changelogs: Mapping[str, SystemStream] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: Config) -> CheckpointFormat:
        """The format ``config`` asks for; a ConfigError naming the first bad key."""
        changelogs = {}
        for store in configured_store_names(config):
            stream = changelog_stream(config, store)
            if stream is not None:
                changelogs[store] = stream
        max_age = config.get_int(MAX_AGE_KEY, DEFAULT_MAX_AGE_MS)
        if max_age < 0:
            raise ConfigError(f"{MAX_AGE_KEY} must be >= 0", key=MAX_AGE_KEY)
        return cls(
            grouper=grouper_class_name(config.get_str(GROUPER_KEY)),
            write_versions=_versions(config, WRITE_VERSIONS_KEY, DEFAULT_WRITE_VERSIONS),
            read_versions=_versions(config, READ_VERSIONS_KEY, DEFAULT_READ_VERSIONS),
            max_age_ms=max_age,
            changelogs=changelogs,
        )

    def encode(self, task_name: str, checkpoint: Checkpoint) -> list[tuple[bytes, bytes]]:
        """The messages (key, value) of a write of ``checkpoint``, one per write version; a CheckpointError
        when a store's changelog offset comes without its changelog SSP."""
        lost = sorted(set(checkpoint.changelog_offsets) - set(checkpoint.changelog_ssps))
        if lost:
            raise CheckpointError(
                f"checkpoint of task {task_name!r}: store {lost[0]!r} has a changelog offset but no "
                "changelog SSP (Samza's checkpoint format keys a store's offset by its changelog's SSP)"
            )
        stores = {
            store: (ssp, checkpoint.changelog_offsets.get(store))
            for store, ssp in checkpoint.changelog_ssps.items()
        }
        checkpoint_id = new_checkpoint_id()
        messages = []
        for version in self.write_versions:
            key = CheckpointKey(VERSION_KEY_TYPES[version], task_name, self.grouper).encode()
            if version == 1:
                changelogs = dict(stores.values())
                value = encode_v1(checkpoint.offsets, changelogs, checkpoint_id)
            else:
                value = encode_v2(checkpoint_id, checkpoint.offsets, stores)
            messages.append((key, value))
        return messages

    def decode(self, key: CheckpointKey, data: bytes) -> Checkpoint:
        """The checkpoint in a value under ``key``; ValueError saying what is wrong when it is not one."""
        offsets: dict[SystemStreamPartition, str] = {}
        stores: dict[str, str] = {}
        ssps: dict[str, SystemStreamPartition] = {}
        if KEY_TYPE_VERSIONS[key.type] == 1:
            by_stream = {(s.system, s.stream): store for store, s in self.changelogs.items()}
            entries, legacy = decode_v1(data)
            on_stream = Counter(
                (ssp.system, ssp.stream) for ssp in entries if (ssp.system, ssp.stream) in by_stream
            )
            for ssp, offset in entries.items():
                store = by_stream.get((ssp.system, ssp.stream))
                if store is not None:
                    # The store's entry says "<checkpointId>:<offset>". A task may also read another
                    # partition of its changelog stream: among several entries on the stream, one with a
                    # plain offset is an input; a lone entry must be the store's (else: an error).
                    try:
                        changelog_offset = None if offset is None else decode_changelog_offset(offset)[1]
                    except ValueError:
                        if on_stream[(ssp.system, ssp.stream)] == 1:
                            raise
                        store = None
                    else:
                        if store in ssps:
                            raise ValueError(
                                f"store {store!r} has two changelog entries ({ssps[store]} and {ssp})"
                            )
                        ssps[store] = ssp
                        if changelog_offset is not None:
                            stores[store] = changelog_offset
                if store is None and offset is not None:
                    offsets[ssp] = offset
            stores.update(legacy)
        else:
            value = decode_v2(data)
            offsets.update(value.inputs)
            for backend, markers in value.markers.items():
                if backend != KAFKA_STATE_BACKEND:
                    log.warning(
                        "task %s: the state of stores %s is checkpointed by state backend %s, which "
                        "samza_nb does not restore from (only Kafka changelogs)",
                        key.task_name,
                        ", ".join(sorted(markers)),
                        backend,
                    )
                    continue
                for store, marker in markers.items():
                    ssp, changelog_offset = decode_marker(marker)
                    ssps[store] = ssp
                    if changelog_offset is not None:
                        stores[store] = changelog_offset
        try:
            return Checkpoint(offsets, stores, ssps)
        except CheckpointError as exc:
            raise ValueError(str(exc)) from None


@dataclass
class _Held:
    checkpoint: Checkpoint | None
    version: int
    timestamp: int | None


class CheckpointTable:
    """The task checkpoints of a checkpoint stream, built by applying its messages in order."""

    def __init__(self, stream: str, checkpoint_format: CheckpointFormat) -> None:
        self.stream = stream
        self.format = checkpoint_format
        self._short_grouper = short_grouper_name(checkpoint_format.grouper)
        self._held: dict[str, _Held] = {}
        self.unread: dict[str, set[int]] = {}
        """Task → the checkpoint versions it has on the stream that are not read (not in
        ``task.checkpoint.read.versions``)."""
        self.stale_keys: dict[str, set[bytes]] = {}
        """Task → keys of its checkpoints written in another spelling (samza_nb's format before Samza's:
        the short grouper name): deleted (tombstoned) at the task's next write, so that compaction drops
        them and Samza, which would refuse their grouper, never reads them."""

    @property
    def checkpoints(self) -> dict[str, Checkpoint]:
        """Task → its checkpoint (tasks whose last message deleted it are absent)."""
        return {task: h.checkpoint for task, h in self._held.items() if h.checkpoint is not None}

    def wrote(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Record that ``checkpoint`` was just written as the task's latest (and its stale keys deleted)."""
        version = next((v for v in self.format.write_versions if v in self.format.read_versions), 1)
        self._held[task_name] = _Held(checkpoint, version, None)
        self.stale_keys.pop(task_name, None)

    def apply(
        self, raw_key: bytes | None, raw_value: bytes | None, offset: int, timestamp: int | None = None
    ) -> None:
        """Apply the message at ``offset`` (written at ``timestamp`` ms, when known). Messages that are not
        checkpoints, or of versions not read, are skipped; another grouper's with a warning; a value
        that is not a checkpoint is a CheckpointError naming the stream, offset and task."""
        key = CheckpointKey.decode(raw_key)
        if key is None:
            return
        task = key.task_name
        version = KEY_TYPE_VERSIONS.get(key.type)
        if version is None:
            log.warning(
                "message at offset %d of %s has unknown checkpoint key type %r (task %r): ignored",
                offset,
                self.stream,
                key.type,
                task,
            )
            return
        if short_grouper_name(key.grouper) != self._short_grouper:
            log.warning(
                "checkpoint of task %r at offset %d of %s was written with grouper %r, not %r: ignored",
                task,
                offset,
                self.stream,
                key.grouper,
                self.format.grouper,
            )
            return
        if raw_key is not None and raw_key != CheckpointKey(key.type, task, self.format.grouper).encode():
            stale = self.stale_keys.setdefault(task, set())
            if raw_value is None:
                stale.discard(raw_key)  # already deleted
            else:
                stale.add(raw_key)
        if version not in self.format.read_versions:
            self.unread.setdefault(task, set()).add(version)
            return
        if not self._overrides(task, version, timestamp):
            return
        checkpoint = None
        if raw_value is not None:
            try:
                checkpoint = self.format.decode(key, raw_value)
            except (ValueError, TypeError, KeyError, UnicodeDecodeError, RecursionError) as exc:
                raise CheckpointError(
                    f"{self.stream} offset {offset}: the {key.type} value of task {task!r} is not a "
                    f"Samza checkpoint: {exc}"
                ) from None
        self._held[task] = _Held(checkpoint, version, timestamp)

    def forgot(self, task_name: str) -> None:
        """Record that the task's checkpoints (every version, every spelling) were just deleted."""
        self._held[task_name] = _Held(None, self.format.read_versions[0], None)
        self.stale_keys.pop(task_name, None)

    def _overrides(self, task: str, version: int, timestamp: int | None) -> bool:
        held = self._held.get(task)
        if held is None:
            return True
        priority = self.format.read_versions
        if priority.index(version) <= priority.index(held.version):
            return True
        if timestamp is None or held.timestamp is None:
            return False
        return timestamp - held.timestamp > self.format.max_age_ms


class StreamCheckpointManager:
    """What the checkpoint managers on a checkpoint stream share: task registration, the lifecycle (new,
    started, stopped), the encoding of a write and the table of each task's last checkpoint. A subclass
    reads the stream into ``_table`` in ``start`` and implements ``_require_started``."""

    def __init__(self, stream: str, checkpoint_format: CheckpointFormat) -> None:
        self.format = checkpoint_format
        self.grouper = checkpoint_format.grouper
        self._tasks: list[str] = []
        self._table = CheckpointTable(stream, checkpoint_format)
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
        found = self._table.checkpoints.get(task_name)
        unread = self._table.unread.get(task_name)
        if found is None and unread:
            log.warning(
                "task %r has checkpoints of version %s only, which %s = %s does not read: it starts "
                "from its inputs' offset.default",
                task_name,
                ",".join(map(str, sorted(unread))),
                READ_VERSIONS_KEY,
                ",".join(map(str, self.format.read_versions)),
            )
        return found

    async def forget_all(self) -> list[str]:
        """Delete every task's checkpoint from the stream (a tombstone for each of its keys, as Samza's
        compaction understands); the tasks that had one, durably forgotten when this returns."""
        self._require_started("forget_all")
        tasks = sorted(self._table.checkpoints)
        versions = sorted(set(self.format.read_versions) | set(self.format.write_versions))
        messages: list[tuple[bytes, bytes | None]] = []
        for task in tasks:
            messages += [
                (CheckpointKey(VERSION_KEY_TYPES[v], task, self.grouper).encode(), None) for v in versions
            ]
            messages += [(key, None) for key in sorted(self._table.stale_keys.get(task, ()))]
        if messages:
            await self._append(f"the checkpoints of {len(tasks)} tasks", messages)
        for task in tasks:
            self._table.forgot(task)
        return tasks

    async def _append(self, what: str, messages: list[tuple[bytes, bytes | None]]) -> None:
        """Write ``messages`` (key, value; None deletes) to the stream, durably; a CheckpointError naming
        ``what`` when that fails."""
        raise NotImplementedError

    def _messages(self, task_name: str, checkpoint: Checkpoint) -> list[tuple[bytes, bytes | None]]:
        """The keys and values of a write of ``checkpoint``, then a tombstone (None) for each stale key of
        the task (see :attr:`CheckpointTable.stale_keys`); a CheckpointError when it is not a checkpoint."""
        if not isinstance(checkpoint, Checkpoint):
            raise CheckpointError(
                f"write_checkpoint of task {task_name!r} needs a Checkpoint, got {checkpoint!r}"
            )
        messages: list[tuple[bytes, bytes | None]] = list(self.format.encode(task_name, checkpoint))
        messages += [(key, None) for key in sorted(self._table.stale_keys.get(task_name, ()))]
        return messages


__all__ = [
    "DEFAULT_GROUPER",
    "DEFAULT_MAX_AGE_MS",
    "DEFAULT_READ_VERSIONS",
    "DEFAULT_WRITE_VERSIONS",
    "GROUPER_KEY",
    "MAX_AGE_KEY",
    "READ_VERSIONS_KEY",
    "WRITE_VERSIONS_KEY",
    "CheckpointFormat",
    "CheckpointTable",
    "StreamCheckpointManager",
    "checkpoint_topic",
]
