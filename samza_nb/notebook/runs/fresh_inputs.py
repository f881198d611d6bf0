"""A notebook job whose in-memory input was made anew starts afresh: its checkpoints and state go.

A notebook keeps a job's checkpoints (and its store state, in the kernel's state directory) for the
kernel's lifetime, so ``%samza_run`` after ``%samza_stop`` resumes where the job was. A data cell run again
(Run All twice) makes its in-memory streams anew (``create_stream(..., replace=True)``): their offsets
start at 0 again, and a checkpoint of the old stream ("up to offset 4999") would make the job skip the new
messages without a word. So :class:`FreshInputs` notes, per job, the incarnation of every in-memory input
at each run; when one differs at the next run, the job's checkpoints (and its files under the kernel's
state directory) are forgotten, and the cell says so in one line. An application's in-memory intermediate
and output streams are made anew with them (a new generation of its outputs): what the old run wrote there
was computed from an input that is gone, and the new run would add to it (notebook 06 run twice counted
every click twice).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

from samza_nb.config import Config
from samza_nb.container.inputs import input_streams
from samza_nb.operators.plan import APP_PLAN_KEY, ApplicationPlan
from samza_nb.storage.duckdb.job_files import job_directory
from samza_nb.systems.inmemory.system import InMemorySystemFactory
from samza_nb.systems.registry import system_factory


class FreshInputs:
    """The incarnations of each job's in-memory inputs at its last run (per ``job.name``/``job.id``);
    ``show`` prints the line telling that a job starts afresh."""

    def __init__(self, show: Callable[[str], None]) -> None:
        self._show = show
        self._seen: dict[tuple[str, str], dict[str, int]] = {}

    def check(
        self, config: Config, stores: MutableMapping[tuple[str, str], Any], state_directory: str
    ) -> None:
        """Before a run of ``config`` (with notebook checkpoints, kept in ``stores``): when an in-memory
        input was made anew since the job's last run, forget its checkpoints and, when they are under the
        kernel's ``state_directory``, its files; say so when there was something to forget."""
        key = (config.job_name(), config.job_id())
        now = incarnations(config)
        before = self._seen.get(key)
        recreated = sorted(
            name for name, number in now.items() if before and before.get(name, number) != number
        )
        if not recreated:
            self._seen[key] = now
            return
        renewed = _renew_written_streams(config)
        self._seen[key] = incarnations(config)  # the intermediate streams just made anew included
        forgot = bool(stores.pop(key, None)) or bool(renewed)
        files = job_directory(config)
        if _is_under(files, state_directory) and files.exists():
            shutil.rmtree(files, ignore_errors=True)
            forgot = True
        if forgot:
            streams = ", ".join(recreated)
            written = f"; its streams {', '.join(renewed)} are made anew too" if renewed else ""
            self._show(
                f"job {key[0]!r}: input {streams} was made anew since the job last ran: its checkpoints "
                f"and state start afresh{written}"
            )


def incarnations(config: Config) -> dict[str, int]:
    """``<system>.<stream>`` → incarnation, for each input of ``config`` that is an existing stream of an
    in-memory system."""
    result = {}
    for stream in input_streams(config):
        factory = system_factory(config, stream.system)
        if isinstance(factory, InMemorySystemFactory):
            broker = factory.broker(stream.system, config)
            if broker.has_stream(stream.stream):
                result[f"{stream.system}.{stream.stream}"] = broker.incarnation(stream.stream)
    return result


def _renew_written_streams(config: Config) -> list[str]:
    """Make anew the in-memory intermediate and output streams of the application ``config`` runs (a
    planned one; a task's outputs are not known before it sends) that hold messages; their names."""
    if not config.get_str(APP_PLAN_KEY, ""):
        return []
    renewed = []
    for stream in ApplicationPlan.from_config(config).streams.values():
        where = stream.system_stream
        if not (stream.intermediate or stream.output):
            continue
        factory = system_factory(config, where.system)
        if not isinstance(factory, InMemorySystemFactory):
            continue
        broker = factory.broker(where.system, config)
        if broker.has_stream(where.stream) and any(
            meta.upcoming != "0" for meta in broker.metadata(where.stream).values()
        ):
            broker.create_stream(where.stream, broker.partition_count(where.stream), replace=True)
            renewed.append(str(where))
    return renewed


def _is_under(path: Path, directory: str) -> bool:
    return path.is_relative_to(Path(directory).expanduser().absolute())


__all__ = ["FreshInputs", "incarnations"]
