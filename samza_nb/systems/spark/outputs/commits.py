"""Which files of a Spark system's outputs are committed: a record per task commit, kept beside the files.

The sink's parquet files are written before a task's checkpoint; they count as output only once the
checkpoint that covers them is written (exactly once, as Spark's own file sink keeps ``_spark_metadata``).
Under ``<output root>/_samza_commits/<job.name>-<job.id>/<task>/g<generation>/``:

- ``<seq>.json``: a committed record: the files (per stream, names relative to the stream's directory) of
  one commit, with the checkpoint it was committed with;
- ``pending.json``: the record of the commit under way: written before the checkpoint, renamed to the next
  ``<seq>.json`` after it (:meth:`OutputCommits.prepare` / :meth:`OutputCommits.committed`);
- ``started.json``: the generation began (a start that reset its inputs begins a new one).

A container that starts again after a crash settles a ``pending.json`` (:meth:`OutputCommits.recover`):
its commit happened when the task's last checkpoint is the one the record was prepared with and that
checkpoint moved on from the one before it (``previous``); then the record is committed. Otherwise its
files are deleted: the restart processes again what produced them. (A checkpoint that did not move covers
output the restart produces again: a window fired with no change of state, end-of-stream.)

A task whose inputs start over (``reset.offset``) begins a new generation; :func:`committed_files` reads
each task's newest generation only, so output of the earlier processing is never read with the new.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.spark.inputs.manifest import fsync_directory, read_json_file, write_json_durably

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint

COMMITS_DIR: Final = "_samza_commits"
"""The directory under an output root that holds the commit records (``_``: Spark's readers skip it)."""
VERSION: Final = 1
PENDING: Final = "pending.json"
STARTED: Final = "started.json"
_RECORD = re.compile(r"^(\d{10})\.json$")
_GENERATION = re.compile(r"^g(\d{6})$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def safe_name(text: str) -> str:
    """``text`` made safe as a file or directory name Spark reads (no leading ``.`` or ``_``)."""
    safe = _UNSAFE.sub("_", text).lstrip("._")
    return safe or "task"


def checkpoint_json(checkpoint: Checkpoint | None) -> Any:
    """A checkpoint as the records keep it (what :class:`Checkpoint` equality compares); None stays None."""
    if checkpoint is None:
        return None
    offsets = sorted([ssp.system, ssp.stream, ssp.partition, offset]
                     for ssp, offset in checkpoint.offsets.items())  # fmt: skip
    return {"offsets": offsets, "changelog": dict(sorted(checkpoint.changelog_offsets.items()))}


@dataclass
class _TaskCommits:
    """Where one task's records go, the generation it writes, and what its next commit records."""

    directory: Path
    next_seq: int
    last: Any
    """The checkpoint (as JSON) of the task's last commit: the ``previous`` of its next record."""
    files: dict[str, list[str]] = field(default_factory=dict)
    """Files written since the last commit, per stream."""
    pending: bool = False


class OutputCommits:
    """The commit records of one output root for one job's tasks (see the module). Used from the container's
    event loop; the file work runs in the caller's thread (the sink calls it through ``to_thread``)."""

    def __init__(self, root: Path, job: str) -> None:
        self.root = root
        self.job_directory = root / COMMITS_DIR / safe_name(job)
        self._tasks: dict[str, _TaskCommits] = {}

    def recover(self, task: str, checkpoint: Checkpoint | None, *, reset: bool) -> None:
        """Settle ``task``'s pending record against the ``checkpoint`` it resumes from and choose the
        generation it writes: a new one when it starts over (``reset``) or resumes from no checkpoint (its
        state starts empty, so output of before would not agree with it); before the task's first commit."""
        task_directory = self.job_directory / safe_name(task)
        current = _newest_generation(task_directory)
        restored = checkpoint_json(checkpoint)
        if current is not None and not reset and checkpoint is not None:
            directory = _generation_directory(task_directory, current)
            self._settle(directory, restored)
            records = _records(directory)
            next_seq = records[-1][0] + 1 if records else 1
        else:
            directory = _generation_directory(task_directory, (current or 0) + 1)
            write_json_durably(directory / STARTED, {"version": VERSION, "task": task, "reset": reset})
            next_seq = 1
        self._tasks[task] = _TaskCommits(directory, next_seq, restored)

    def written(self, task: str, stream: str, name: str) -> None:
        """``task`` wrote file ``name`` (in the directory of ``stream``) for its next commit."""
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
            "checkpoint": checkpoint_json(checkpoint),
            "previous": commits.last,
            "files": commits.files,
        }
        write_json_durably(commits.directory / PENDING, record)
        commits.pending = True

    def committed(self, task: str, checkpoint: Checkpoint) -> None:
        """After ``task``'s checkpoint was written: its pending record becomes the next committed one."""
        commits = self._task(task)
        if commits.pending:
            target = commits.directory / f"{commits.next_seq:010d}.json"
            os.replace(commits.directory / PENDING, target)
            fsync_directory(commits.directory)
            commits.next_seq += 1
            commits.pending = False
        commits.files = {}
        commits.last = checkpoint_json(checkpoint)

    def _task(self, task: str) -> _TaskCommits:
        commits = self._tasks.get(task)
        if commits is None:
            raise SystemProducerError(
                f"Spark output of task {task!r}: the container did not recover its commits before writing"
            )
        return commits

    def _settle(self, directory: Path, restored: Any) -> None:
        pending = directory / PENDING
        record = _read_json(pending)
        if record is None:
            return
        if record.get("checkpoint") == restored and restored != record.get("previous"):
            records = _records(directory)
            target = directory / f"{(records[-1][0] + 1 if records else 1):010d}.json"
            os.replace(pending, target)
        else:
            for stream, names in dict(record.get("files", {})).items():
                for name in names:
                    (self.root / stream / name).unlink(missing_ok=True)
            pending.unlink()
        fsync_directory(directory)


def committed_files(root: Path, job: str, stream: str) -> list[Path]:
    """The committed files of ``stream`` under output root ``root`` written by ``job`` (``<name>-<id>``):
    each task's newest generation, in task then commit order."""
    job_directory = root / COMMITS_DIR / safe_name(job)
    if not job_directory.is_dir():
        return []
    found: list[Path] = []
    for task_directory in sorted(p for p in job_directory.iterdir() if p.is_dir()):
        generation = _newest_generation(task_directory)
        if generation is None:
            continue
        for _, path in _records(_generation_directory(task_directory, generation)):
            record = _read_json(path) or {}
            names: Sequence[str] = dict(record.get("files", {})).get(stream, [])
            found.extend(root / stream / name for name in names)
    return found


def start_new_generations(root: Path, job: str) -> int:
    """Begin a new generation for every task that wrote output under ``root`` for ``job`` (a reset of the
    job: :func:`committed_files` reads nothing of before); the number of tasks."""
    job_directory = root / COMMITS_DIR / safe_name(job)
    if not job_directory.is_dir():
        return 0
    count = 0
    for task_directory in sorted(p for p in job_directory.iterdir() if p.is_dir()):
        current = _newest_generation(task_directory)
        if current is None:
            continue
        directory = _generation_directory(task_directory, current + 1)
        started = {"version": VERSION, "task": task_directory.name, "reset": True}
        write_json_durably(directory / STARTED, started)
        count += 1
    return count


@dataclass(frozen=True)
class OutputGeneration:
    """One generation of one task's output under an output root: ``records`` (its directory of commit
    records), ``files`` (the output files its records, committed or pending, list) and whether it is the
    task's ``current`` (newest) one, which :func:`committed_files` reads."""

    task: str
    number: int
    records: Path
    files: tuple[Path, ...]
    current: bool


def output_generations(root: Path, job: str) -> list[OutputGeneration]:
    """Every generation of every task's output under ``root`` for ``job`` (``<name>-<id>``), in task then
    generation order: what ``samza-nb clean`` removes (the old ones; with ``--all`` every one)."""
    job_directory = root / COMMITS_DIR / safe_name(job)
    if not job_directory.is_dir():
        return []
    found: list[OutputGeneration] = []
    for task_directory in sorted(p for p in job_directory.iterdir() if p.is_dir()):
        newest = _newest_generation(task_directory)
        numbers = sorted(
            int(m.group(1)) for p in task_directory.iterdir() if (m := _GENERATION.match(p.name))
        )
        for number in numbers:
            directory = _generation_directory(task_directory, number)
            paths = [path for _, path in _records(directory)] + [directory / PENDING]
            files = [
                root / stream / name
                for path in paths if path.is_file()
                for stream, names in dict((_read_json(path) or {}).get("files", {})).items()
                for name in names
            ]  # fmt: skip
            found.append(
                OutputGeneration(task_directory.name, number, directory, tuple(files), number == newest)
            )
    return found


def _newest_generation(task_directory: Path) -> int | None:
    if not task_directory.is_dir():
        return None
    numbers = [int(m.group(1)) for p in task_directory.iterdir() if (m := _GENERATION.match(p.name))]
    return max(numbers, default=None)


def _generation_directory(task_directory: Path, generation: int) -> Path:
    return task_directory / f"g{generation:06d}"


def _records(directory: Path) -> list[tuple[int, Path]]:
    """The committed records of a generation, by sequence number."""
    if not directory.is_dir():
        return []
    return sorted((int(m.group(1)), p) for p in directory.iterdir() if (m := _RECORD.match(p.name)))


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
    "OutputGeneration",
    "checkpoint_json",
    "committed_files",
    "output_generations",
    "safe_name",
    "start_new_generations",
]
