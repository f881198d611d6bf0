"""Removing what a finished job, or an old generation of it, left behind: the one implementation behind
``samza-nb clean`` and ``%samza_clean`` (docs/how-to/cleanup.md).

A job is *finished* when no process runs it: the reset's check (:func:`~.reset.refuse_while_running`)
finds no run holding its files and no driver holding a live claim on its coordinator stream, else nothing
is removed and a :class:`JobRunningError` says so in one line.

By default clean removes what no run of the job reads again and keeps its current generation (what the
next run resumes from):

- old Spark output generations (after a reset or a restart from no checkpoint): their parquet files and
  their commit records; the current generation of each task stays;
- state files that ``--restore-state`` set aside (``*.unusable-*``);
- the state files on this machine when they are a cache: every store of the job has a changelog and every
  task of a state file has a checkpoint (the next run restores them from the changelogs up to it).

``everything`` (``--all``) also removes the current generation: the job is reset (its checkpoints are
forgotten wherever they live, :func:`~.reset.reset_job`), then its directory, its written Spark inputs and
every output generation are deleted. ``topics`` (``--topics``, only with ``--all``: a checkpoint without its
changelog restores empty state) deletes the job's streams on every system whose admin can
(:class:`~samza_nb.systems.base.StreamDeletingAdmin`, Kafka): its coordinator and checkpoint streams, its
stores' changelogs and its intermediate streams. ``dry_run`` lists the same without removing anything.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from samza_nb.checkpoint.base import load_checkpoint_manager
from samza_nb.checkpoint.stream_format import checkpoint_topic
from samza_nb.config.stores import changelog_stream, configured_store_names
from samza_nb.container.event_loop import run_blocking
from samza_nb.container.inputs import configured_systems
from samza_nb.coordinator.stream_store import coordinator_stream_name
from samza_nb.errors import CheckpointError, ConfigError
from samza_nb.operators.application import intermediate_stream_prefix
from samza_nb.runtime.job_files import (
    OutputGeneration,
    commit_directories,
    job_files_directories,
    output_generations,
    shipped_code,
    spark_input_directories,
)
from samza_nb.runtime.reset import refuse_while_running, reset_job
from samza_nb.storage.duckdb.paths import job_directory, state_directory
from samza_nb.systems.base import StreamDeletingAdmin
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.config import Config

SET_ASIDE = "*.unusable-*"
"""The names of state files ``--restore-state`` moved aside."""


@dataclass
class Leftover:
    """One kind of thing a job left: ``paths`` (files, and directories removed whole), with ``files`` and
    ``size`` (bytes) counted once each; ``note`` says more (how many generations, where)."""

    what: str
    paths: list[Path] = field(default_factory=list)
    files: int = 0
    size: int = 0
    note: str = ""


@dataclass
class CleanPlan:
    """What clean removes from one job (:func:`plan_clean`): ``leftovers`` on disk, ``topics`` per system,
    ``kept`` (what stays, in words)."""

    job: str
    leftovers: list[Leftover]
    topics: dict[str, list[str]]
    kept: str
    checkpoints: bool = False
    """True with ``--all``: the job's checkpoints are forgotten (a reset) before its files go."""

    def lines(self, *, done: bool) -> list[str]:
        """A few lines saying what was (``done``) or would be removed, and how much, then what stays."""
        items = [item for item in self.leftovers if item.files]
        topics = sum(len(names) for names in self.topics.values())
        verb = "removed" if done else "would remove"
        total = f"{sum(i.files for i in items)} file(s), {_size(sum(i.size for i in items))}"
        if not items and not topics and not self.checkpoints:
            head = f"job {self.job}: nothing to clean"
        else:
            head = f"job {self.job}: {verb} {total}" + (f", {topics} topic(s)" if topics else "")
            head += "" if done else " (dry run: nothing removed)"
        lines = [head]
        if self.checkpoints:
            lines.append(
                "  checkpoints: forgotten (a reset: the next run starts from each input's offset.default)"
            )
        for item in items:
            note = f" ({item.note})" if item.note else ""
            lines.append(f"  {item.what}: {item.files} file(s), {_size(item.size)}{note}")
        for system, names in sorted(self.topics.items()):
            lines.append(f"  topics on system {system!r}: {', '.join(names)}")
        lines.append(f"kept: {self.kept}")
        return lines


def clean_job(
    config: Config,
    *,
    dry_run: bool = False,
    everything: bool = False,
    topics: bool = False,
    checkpoints: MutableMapping[str, Checkpoint] | None = None,
) -> list[str]:
    """Remove what job ``config`` left (see the module); the lines saying what and how much. Refused with a
    :class:`JobRunningError` while the job runs, with a ConfigError for ``topics`` without ``everything``.
    ``checkpoints``: the job's checkpoints when this process keeps them (a notebook's), for ``--all``."""
    if topics and not everything:
        raise ConfigError(
            "--topics deletes the checkpoint and changelog topics the next run resumes from: "
            "add --all (the current generation goes too)"
        )
    job = f"{config.job_name()!r} (job.id {config.job_id()!r})"
    refuse_while_running(config, job, "clean")
    plan = plan_clean(config, everything=everything, topics=topics, checkpoints=checkpoints)
    if dry_run:
        return plan.lines(done=False)
    if everything:
        reset_job(config, checkpoints=checkpoints)
    for item in plan.leftovers:
        for path in item.paths:
            _remove(path)
    _remove_empty_stream_directories(plan)
    if plan.topics:
        run_blocking(_delete_topics(config, plan.topics))
    return plan.lines(done=True)


def plan_clean(
    config: Config,
    *,
    everything: bool = False,
    topics: bool = False,
    checkpoints: Mapping[str, Checkpoint] | None = None,
) -> CleanPlan:
    """What :func:`clean_job` removes from job ``config`` (nothing is removed here; ``checkpoints``: the
    job's in-memory ones, a notebook's)."""
    job = f"{config.job_name()!r} (job.id {config.job_id()!r})"
    counted: set[Path] = set()
    leftovers: list[Leftover] = []
    generations = output_generations(config)
    old = [g for g in generations if not g.current]
    leftovers.append(_generations("old output generations", old, counted))
    leftovers.append(
        _directories("shipped code archives (made anew at each start)", shipped_code(config), counted)
    )
    states = state_directory(config)
    leftovers.append(_files("set-aside state files", sorted(states.glob(SET_ASIDE)), counted))
    not_cache = None if everything else _state_is_cache(config, checkpoints)
    if not_cache is None:
        files = sorted(p for p in states.glob("*") if p.is_file() and p not in counted)
        note = "" if everything else "a cache: every store has a changelog, every task a checkpoint"
        leftovers.append(_files("state files", files, counted, note))
    if everything:
        leftovers.append(
            _generations("current output generations", [g for g in generations if g.current], counted)
        )
        inputs = spark_input_directories(config)
        leftovers.append(_directories("written Spark inputs", inputs, counted))
        roots = sorted({*commit_directories(config), job_directory(config), *job_files_directories(config)})
        leftovers.append(_directories("the job's other files (checkpoints, commit records)", roots, counted))
        kept = "nothing of the job: the next run starts it anew"
    else:
        kept = _kept(not_cache)
    found = run_blocking(_job_topics(config)) if topics else {}
    return CleanPlan(job, leftovers, found, kept, checkpoints=everything)


# -- what the job left -----------------------------------------------------------------------------------
def _state_is_cache(config: Config, checkpoints: Mapping[str, Checkpoint] | None) -> str | None:
    """None when the job's state files are a cache (it has stores, each with a changelog, and every task of
    a state file has a checkpoint to restore up to), else why they are not. ``checkpoints``: the job's
    in-memory ones (a notebook's), else its checkpoint manager's are read."""
    stores = configured_store_names(config)
    if not stores:
        return "the job has no store"
    lonely = [name for name in stores if changelog_stream(config, name) is None]
    if lonely:
        return f"store {lonely[0]!r} has no changelog: its state file is the only copy"
    try:
        tasks = _state_file_tasks(config)
    except CheckpointError as exc:
        return str(exc)
    if checkpoints is not None:
        held = {task for task in tasks if task in checkpoints}
    else:
        held = run_blocking(_checkpointed(config, tasks))
    missing = sorted(tasks - held)
    if missing:
        return f"task {missing[0]!r} has no checkpoint: its state file is the only record of its progress"
    return None


def _state_file_tasks(config: Config) -> set[str]:
    """The tasks whose offsets the job's state files hold."""
    from samza_nb.storage.duckdb.state_file import StateFile

    name, ident = config.job_name(), config.job_id()
    tasks: set[str] = set()
    for path in sorted(state_directory(config).glob("partition-*.duckdb")):
        file = StateFile(path, name, ident)
        file.open()
        try:
            tasks |= file.recorded_tasks()
        finally:
            file.close()
    return tasks


async def _checkpointed(config: Config, tasks: set[str]) -> set[str]:
    """Those of ``tasks`` that have a checkpoint in the job's checkpoint manager."""
    if not tasks:
        return set()
    manager = load_checkpoint_manager(config)
    for task in sorted(tasks):
        manager.register(task)
    await manager.start()
    try:
        return {task for task in tasks if await manager.read_last_checkpoint(task) is not None}
    finally:
        await manager.stop()


def _kept(not_cache: str | None) -> str:
    state = "" if not_cache is None else f", state files ({not_cache})"
    what = f"checkpoints{state}, written inputs, current outputs, topics"
    return f"the current generation ({what}); --all removes it"


async def _job_topics(config: Config) -> dict[str, list[str]]:
    """The job's streams on every system whose admin lists and deletes streams, per system."""
    named = {coordinator_stream_name(config.job_name(), config.job_id()),
             checkpoint_topic(config.job_name(), config.job_id())}  # fmt: skip
    changelogs = {
        (s.system, s.stream) for n in configured_store_names(config) if (s := changelog_stream(config, n))
    }
    prefix = intermediate_stream_prefix(config)
    found: dict[str, list[str]] = {}
    for system in configured_systems(config):
        admin = system_factory(config, system).get_admin(system, config)
        if not isinstance(admin, StreamDeletingAdmin):
            continue
        names = sorted(n for n in await admin.stream_names()
                       if n in named or (system, n) in changelogs or n.startswith(prefix))  # fmt: skip
        if names:
            found[system] = names
    return found


async def _delete_topics(config: Config, topics: dict[str, list[str]]) -> None:
    for system, names in topics.items():
        admin = system_factory(config, system).get_admin(system, config)
        if isinstance(admin, StreamDeletingAdmin):
            await admin.delete_streams(names)


# -- counting and removing -------------------------------------------------------------------------------
def _generations(what: str, generations: list[OutputGeneration], counted: set[Path]) -> Leftover:
    item = Leftover(what)
    for generation in generations:
        for directory in (*generation.directories, generation.records):
            _add_directory(item, directory, counted)
    streams = len({d.parent.parent.name for g in generations for d in g.directories})
    item.note = f"{len(generations)} generation(s) of {streams} stream(s)" if generations else ""
    return item


def _files(what: str, files: list[Path], counted: set[Path], note: str = "") -> Leftover:
    item = Leftover(what, note=note)
    for path in files:
        if path.is_file() and path not in counted:
            counted.add(path)
            item.paths.append(path)
            item.files += 1
            item.size += path.stat().st_size
    return item


def _directories(what: str, directories: list[Path], counted: set[Path]) -> Leftover:
    item = Leftover(what)
    for directory in directories:
        _add_directory(item, directory, counted)
    return item


def _add_directory(item: Leftover, directory: Path, counted: set[Path]) -> None:
    if not directory.is_dir():
        return
    item.paths.append(directory)
    for base, _, names in os.walk(directory):
        for name in names:
            path = Path(base) / name
            if path not in counted and path.is_file():
                counted.add(path)
                item.files += 1
                item.size += path.stat().st_size


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _remove_empty_stream_directories(plan: CleanPlan) -> None:
    """The directories whose every entry went: a stream's directory of the job (``<stream>/<job>/``) and the
    stream's own, once their generations went."""
    parents = {p.parent for item in plan.leftovers for p in item.paths}
    parents |= {p.parent for p in parents}
    for parent in sorted(parents, key=lambda p: len(p.parts), reverse=True):
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def _size(size: int) -> str:
    if size < 1000:
        return f"{size} bytes"
    amount = float(size)
    for unit in ("kB", "MB", "GB"):
        amount /= 1000
        if amount < 1000 or unit == "GB":
            break
    return f"{amount:.1f} {unit}"


__all__ = ["CleanPlan", "Leftover", "clean_job", "plan_clean"]
