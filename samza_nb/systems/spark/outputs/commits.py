"""Which files of a Spark system's outputs are committed: each stream's ``_spark_metadata`` log, fed with
the task's checkpoint (layout: :mod:`.generations`; the log: :mod:`.spark_log`).

The sink's parquet files are written before a task's checkpoint; they count as output only once the
checkpoint that covers them is written (exactly once, as Spark's own file sink keeps ``_spark_metadata``):

- :meth:`OutputCommits.prepare` (before the checkpoint): ``pending.json`` in the task's directory of the
  generation records the commit's files (per stream), the checkpoint and the one before it;
- :meth:`OutputCommits.committed` (after it): each stream's files are appended to that stream's log as one
  batch (the batch id is the log's next free one: containers share the log), then ``pending.json`` goes.

A container that starts again after a crash settles a ``pending.json`` (:meth:`OutputCommits.recover`):
its commit happened when the task's last checkpoint is the one the record was prepared with and that
checkpoint moved on from the one before it (``previous``); then its files that are not in their log yet
are appended. Otherwise its files are deleted: the restart processes again what produced them. (A
checkpoint that did not move covers output the restart produces again: a window fired with no change of
state, end-of-stream.) Then the task's files in the generation that no log lists are deleted: written by an
attempt that died before its record (no checkpoint can reference them), or replaced by a merged file.

A task whose inputs start over (``reset``), or that resumes from no checkpoint after committing output,
begins a new generation (another directory, another log), unless the generation is new in this start of the
job (another task of the same start began it). :meth:`OutputCommits.committed` merges a task's small files
at the log's compaction (:mod:`.merge`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb import crash_points
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.spark.inputs.manifest import fsync_directory, read_json_file, write_json_durably
from samza_nb.systems.spark.outputs.generations import (
    COMMITS_DIR,
    begin_generation,
    commits_directory,
    current_generation,
    generation_name,
    safe_name,
    stream_directory,
)
from samza_nb.systems.spark.outputs.merge import SmallFileMerger
from samza_nb.systems.spark.outputs.spark_log import SparkMetadataLog, committed_paths, entry_for

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint

VERSION: Final = 2
PENDING: Final = "pending.json"
STARTED: Final = "started.json"
COMMITTED: Final = "committed"
"""A task's marker in a generation: it committed output there."""


def checkpoint_json(checkpoint: Checkpoint | None) -> Any:
    """A checkpoint as the records keep it (what :class:`Checkpoint` equality compares); None stays None."""
    if checkpoint is None:
        return None
    offsets = sorted([ssp.system, ssp.stream, ssp.partition, offset]
                     for ssp, offset in checkpoint.offsets.items())  # fmt: skip
    return {"offsets": offsets, "changelog": dict(sorted(checkpoint.changelog_offsets.items()))}


def file_prefix(task: str) -> str:
    """The start of every file name of ``task`` (``<prefix>.<stamp>-<random>.parquet``; no ``.`` in it,
    so that no task's prefix starts another's file names)."""
    return safe_name(task).replace(".", "_")


def task_file(prefix: str) -> re.Pattern[str]:
    """The names of the parquet files of the task whose file prefix is ``prefix``."""
    return re.compile(rf"^{re.escape(prefix)}\.\d{{20}}-[0-9a-f]{{8}}\.parquet$")


@dataclass
class _TaskCommits:
    """Where one task's record goes, the generation it writes, and what its next commit records."""

    directory: Path
    generation: int
    last: Any
    """The checkpoint (as JSON) of the task's last commit: the ``previous`` of its next record."""
    files: dict[str, list[str]] = field(default_factory=dict)
    """Files written since the last commit, per stream."""
    pending: bool = False
    marked: bool = False


class OutputCommits:
    """The commits of one output root for one job's tasks (see the module). Used from the container's
    event loop; the file work runs in the caller's thread (the sink calls it through ``to_thread``)."""

    def __init__(self, root: Path, job: str, target_rows: int = 0) -> None:
        self.root = root
        self.job = job
        self.job_directory = commits_directory(root, job)
        self._tasks: dict[str, _TaskCommits] = {}
        self._lock = threading.Lock()
        self._merger = SmallFileMerger(target_rows, self._owned_prefixes)

    def stream_directory(self, task: str, stream: str) -> Path:
        """Where ``task`` writes its files of ``stream`` (its generation's directory)."""
        return stream_directory(self.root, self.job, stream, self._task(task).generation)

    def recover(self, task: str, checkpoint: Checkpoint | None, *, reset: bool) -> None:
        """Choose the generation ``task`` writes (see the module), settle its pending record against the
        ``checkpoint`` it resumes from and delete its files no log lists; before the task's first commit."""
        current = current_generation(self.root, self.job)
        generation = current or 1
        task_directory = begin_generation(self.root, self.job, generation) / safe_name(task)
        restored = checkpoint_json(checkpoint)
        starts_over = reset or (checkpoint is None and (task_directory / COMMITTED).exists())
        if starts_over and (task_directory / STARTED).exists():
            generation += 1
            task_directory = begin_generation(self.root, self.job, generation) / safe_name(task)
        if not (task_directory / STARTED).exists():
            write_json_durably(task_directory / STARTED, {"version": VERSION, "task": task, "reset": reset})
        marked = (task_directory / COMMITTED).exists()
        commits = _TaskCommits(task_directory, generation, restored, marked=marked)
        with self._lock:
            self._tasks[task] = commits
        self._settle(task, commits, restored)
        self._delete_orphans(task, generation)

    def written(self, task: str, stream: str, name: str) -> None:
        """``task`` wrote file ``name`` (in its directory of ``stream``) for its next commit."""
        self._task(task).files.setdefault(stream, []).append(name)

    def prepare(self, task: str, checkpoint: Checkpoint) -> None:
        """Before ``task``'s checkpoint is written: record the files of this commit as pending (nothing when
        it wrote none)."""
        commits = self._task(task)
        if not commits.files:
            return
        record = {
            "version": VERSION,
            "task": task,
            "generation": commits.generation,
            "checkpoint": checkpoint_json(checkpoint),
            "previous": commits.last,
            "files": commits.files,
        }
        write_json_durably(commits.directory / PENDING, record)
        commits.pending = True

    def committed(self, task: str, checkpoint: Checkpoint) -> None:
        """After ``task``'s checkpoint was written: its pending files are appended to their streams' logs."""
        commits = self._task(task)
        if commits.pending:
            self._append(task, commits, commits.files)
            if crash_points.ARMED:
                crash_points.reached("spark.output-logged")
            (commits.directory / PENDING).unlink()
            fsync_directory(commits.directory)
            commits.pending = False
        commits.files = {}
        commits.last = checkpoint_json(checkpoint)

    def _append(self, task: str, commits: _TaskCommits, files: Mapping[str, Sequence[str]]) -> None:
        for stream, names in files.items():
            directory = stream_directory(self.root, self.job, stream, commits.generation)
            log = SparkMetadataLog(directory)
            log.append([entry_for(directory / name) for name in names], self._merger.merge)
        if not commits.marked:
            (commits.directory / COMMITTED).touch()
            commits.marked = True

    def _owned_prefixes(self) -> frozenset[str]:
        with self._lock:
            return frozenset(file_prefix(task) for task in self._tasks)

    def _task(self, task: str) -> _TaskCommits:
        commits = self._tasks.get(task)
        if commits is None:
            raise SystemProducerError(
                f"Spark output of task {task!r}: the container did not recover its commits before writing"
            )
        return commits

    def _settle(self, task: str, commits: _TaskCommits, restored: Any) -> None:
        pending = commits.directory / PENDING
        record = _read_json(pending)
        if record is None:
            return
        files: dict[str, list[str]] = {s: list(n) for s, n in dict(record.get("files", {})).items()}
        if record.get("checkpoint") == restored and restored != record.get("previous"):
            missing: dict[str, list[str]] = {}
            for stream, names in files.items():
                directory = stream_directory(self.root, self.job, stream, commits.generation)
                live = {Path(p).name for p in committed_paths(directory)}
                if not all(name in live for name in names):
                    missing[stream] = [name for name in names if name not in live]
            self._append(task, commits, missing)
        else:
            for stream, names in files.items():
                directory = stream_directory(self.root, self.job, stream, commits.generation)
                for name in names:
                    (directory / name).unlink(missing_ok=True)
        pending.unlink()
        fsync_directory(commits.directory)

    def _delete_orphans(self, task: str, generation: int) -> None:
        """Delete ``task``'s files of ``generation`` that no log lists (and its temporary files)."""
        prefix = file_prefix(task)
        pattern = task_file(prefix)
        for stream_root in _stream_roots(self.root):
            directory = stream_directory(self.root, self.job, stream_root.name, generation)
            if not directory.is_dir():
                continue
            live = {Path(p).name for p in committed_paths(directory)}
            for path in directory.iterdir():
                name = path.name
                orphan = pattern.match(name) is not None and name not in live
                if orphan or (name.startswith(f".{prefix}.") and name.endswith(".tmp")):
                    path.unlink(missing_ok=True)


def _stream_roots(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return [p for p in sorted(root.iterdir()) if p.is_dir() and p.name != COMMITS_DIR]


def committed_files(root: Path, job: str, stream: str) -> list[Path]:
    """The committed files of ``stream`` under output root ``root`` written by ``job`` (``<name>-<id>``):
    those its current generation's log lists, in commit order."""
    generation = current_generation(root, job)
    if generation is None:
        return []
    return [Path(p) for p in committed_paths(stream_directory(root, job, stream, generation))]


def start_new_generations(root: Path, job: str) -> int:
    """Begin a new generation of ``job``'s outputs under ``root`` (a reset of the job: its next run writes
    and :func:`committed_files` reads only the new one); the number of tasks that wrote the old one."""
    current = current_generation(root, job)
    if current is None:
        return 0
    old = commits_directory(root, job) / generation_name(current)
    tasks = sum(1 for p in old.iterdir() if p.is_dir())
    begin_generation(root, job, current + 1)
    return tasks


def _read_json(path: Path) -> Mapping[str, Any] | None:
    data = read_json_file(path, "Spark output commit record")
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        raise SamzaError(f"Spark output commit record {str(path)!r} is not a version {VERSION} record")
    return data


__all__ = [
    "COMMITS_DIR",
    "OutputCommits",
    "checkpoint_json",
    "committed_files",
    "file_prefix",
    "safe_name",
    "start_new_generations",
]
