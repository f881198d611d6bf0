"""``%samza_checkpoints``: the last checkpoint of every task of the notebook's job, and its history.

Notebook jobs keep checkpoints in memory for the kernel's lifetime unless the config names a
``task.checkpoint.factory``; then they are read back from that factory's store once the job stopped
(while it runs, the committed offsets come from the job itself). The history is the checkpoints the
latest run wrote, as the dashboard saw them.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.checkpoint.base import checkpoint_factory_path, load_checkpoint_manager
from samza_nb.container.event_loop import run_blocking
from samza_nb.errors import SamzaError
from samza_nb.notebook.display.text_status import html_table, text_table
from samza_nb.notebook.display.view_rows import COMMIT_HEADERS, checkpoint_rows
from samza_nb.notebook.display.views import CommitView, JobView
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics import cell_config
from samza_nb.runtime.reset import reset_job

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.notebook.runs.job import JobRun

Offsets = dict[str, dict["SystemStreamPartition", str]]

OFFSET_HEADERS = ("task", "partition", "checkpointed offset")


class CheckpointReport:
    """What ``%samza_checkpoints`` returns: ``offsets`` ({task: {ssp: offset}}) and ``history`` (the
    checkpoints the latest run wrote, newest first), shown as tables. ``source`` says where they came
    from."""

    def __init__(
        self, job: str, source: str, offsets: Offsets, history: Sequence[CommitView] = (), note: str = ""
    ) -> None:
        self.job = job
        self.source = source
        self.offsets = offsets
        self.history = tuple(history)
        self.note = note

    def offset(self, task: str, ssp: SystemStreamPartition) -> str | None:
        """The checkpointed offset of ``ssp`` in ``task`` (None when it has none)."""
        return self.offsets.get(task, {}).get(ssp)

    def _rows(self) -> list[tuple[str, ...]]:
        return [
            (task, str(ssp), offset)
            for task, by_ssp in sorted(self.offsets.items())
            for ssp, offset in sorted(by_ssp.items())
        ]

    def __str__(self) -> str:
        lines = [f"checkpoints of job {self.job!r} ({self.source})"]
        if self.note:
            lines.append(self.note)
        rows = self._rows()
        lines.append(text_table(OFFSET_HEADERS, rows) if rows else "(no checkpoint written yet)")
        if self.history:
            lines += [
                "",
                "written by the latest run (newest first):",
                text_table(COMMIT_HEADERS, checkpoint_rows(self.history)),
            ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        rows = self._rows()
        parts = [
            f"<div><b>checkpoints of job {html.escape(self.job)!s}</b> ({html.escape(self.source)})</div>"
        ]
        if self.note:
            parts.append(f"<div>{html.escape(self.note)}</div>")
        parts.append(html_table(OFFSET_HEADERS, rows) if rows else "<div>(no checkpoint written yet)</div>")
        if self.history:
            parts.append("<div style='margin-top:4px'>written by the latest run (newest first):</div>")
            parts.append(html_table(COMMIT_HEADERS, checkpoint_rows(self.history)))
        return "<div class='samza-checkpoints'>" + "".join(parts) + "</div>"


def from_store(store: Mapping[str, Checkpoint]) -> Offsets:
    """The offsets of in-memory checkpoints ({task: Checkpoint})."""
    return {task: dict(checkpoint.offsets) for task, checkpoint in dict(store).items()}


def from_view(view: JobView) -> Offsets:
    """The committed offsets a running job reports (when its checkpoints live elsewhere)."""
    result: Offsets = {}
    for task in view.tasks:
        committed = {p.ssp: p.committed for p in task.partitions if p.committed is not None}
        if committed:
            result[task.name] = committed
    return result


def from_factory(config: Config, tasks: Sequence[str]) -> Offsets:
    """The last checkpoints of ``tasks`` read back from the store of ``task.checkpoint.factory``."""

    async def read() -> Offsets:
        manager = load_checkpoint_manager(config)
        for name in tasks:
            manager.register(name)
        await manager.start()
        try:
            result: Offsets = {}
            for name in tasks:
                checkpoint = await manager.read_last_checkpoint(name)
                if checkpoint is not None:
                    result[name] = dict(checkpoint.offsets)
            return result
        finally:
            await manager.stop()

    return run_blocking(read())


def report(
    run: JobRun | None, config: Config, stores: Mapping[tuple[str, str], dict[str, Checkpoint]]
) -> CheckpointReport:
    """The report of job ``config`` (``run``: its latest run, if any): in-memory checkpoints from
    ``stores`` (per job.name and job.id), the running job's committed offsets, or what the configured
    checkpoint factory holds once the run stopped."""
    job = config.job_name()
    key = (job, config.job_id())
    history = run.view.commits if run is not None else ()
    if cell_config.uses_notebook_checkpoints(config):
        offsets = from_store(stores.get(key, {}))
        return CheckpointReport(job, "in memory, kept for this kernel", offsets, history)
    factory = config.get_str(cell_config.CHECKPOINT_FACTORY_KEY, "")
    model = run.job.job_model if run is not None else None
    if run is None or model is None:
        return CheckpointReport(job, factory, {}, (), "no run yet: its tasks are not known")
    if not run.done:
        offsets = from_view(run.view)
        return CheckpointReport(job, "committed offsets of the running job", offsets, history)
    tasks = sorted(model.tasks)
    source = factory or checkpoint_factory_path(config)
    return CheckpointReport(job, source, from_factory(config, tasks), history)


def reset(run: JobRun | None, config: Config, stores: dict[tuple[str, str], dict[str, Checkpoint]]) -> str:
    """``%samza_checkpoints --reset``: job ``config`` starts over (``run``: its latest run, which must have
    ended): its checkpoints (in memory in ``stores``, per job.name and job.id, or in its checkpoint
    factory's store), its state files and, for Spark outputs, their generation
    (:func:`samza_nb.runtime.reset.reset_job`); the line that says what was dropped."""
    in_memory = _finished(run, config, stores, "samza_checkpoints", "--reset")
    try:
        return reset_job(config, checkpoints=in_memory)
    except SamzaError as exc:
        raise NotebookError(f"samza_checkpoints --reset: {exc}") from None


def clean(
    run: JobRun | None,
    config: Config,
    stores: dict[tuple[str, str], dict[str, Checkpoint]],
    *,
    dry_run: bool = False,
    everything: bool = False,
    topics: bool = False,
) -> str:
    """``%samza_clean``: remove what job ``config`` left (``run``: its latest run, which must have ended), as
    ``samza-nb clean`` does (:func:`samza_nb.runtime.clean.clean_job`; ``stores``: the in-memory
    checkpoints that ``everything`` forgets); the lines that say what and how much."""
    from samza_nb.runtime.clean import clean_job

    in_memory = _finished(run, config, stores, "samza_clean", "cleaning it")
    try:
        lines = clean_job(
            config, dry_run=dry_run, everything=everything, topics=topics, checkpoints=in_memory
        )
    except SamzaError as exc:
        raise NotebookError(f"samza_clean: {exc}") from None
    return "\n".join(lines)


def _finished(
    run: JobRun | None,
    config: Config,
    stores: dict[tuple[str, str], dict[str, Checkpoint]],
    magic: str,
    action: str,
) -> dict[str, Checkpoint] | None:
    """A NotebookError while ``run`` runs (``%samza_stop`` it before ``action``); else the job's in-memory
    checkpoints (None: they are its checkpoint factory's)."""
    job = config.job_name()
    if run is not None and not run.done:
        raise NotebookError(f"{magic}: job {job!r} is running: %samza_stop {job} before {action}")
    if cell_config.uses_notebook_checkpoints(config):
        return stores.setdefault((job, config.job_id()), {})
    return None


__all__ = ["CheckpointReport", "clean", "from_factory", "from_store", "from_view", "report", "reset"]
