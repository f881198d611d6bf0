"""The samza_nb magics. Thin: the parsers in :mod:`.parsers`, the work in :mod:`..session` and its helpers.

Settings (``%config SamzaMagics.<name> = ...``, or in ``ipython_config.py``):

- ``dashboard``: ``auto`` (widgets in a Jupyter kernel with ipywidgets, text elsewhere), ``widgets``,
  ``text`` or ``off``;
- ``refresh_interval``: seconds between dashboard updates (default 0.2: at most 5 per second).

Magic lines ignore ``#`` comments. Before each cell, a job without a dashboard that failed in the background
since the last cell is reported once (:meth:`~..session.NotebookSession.report_failures`).
"""

from __future__ import annotations

import contextlib
import sys
from typing import TYPE_CHECKING, Any

from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from IPython.display import display
from traitlets import Enum, Float

from samza_nb.notebook.display.dashboard import widgets_available
from samza_nb.notebook.display.steps import PeekReport, StepsReport
from samza_nb.notebook.display.text_status import StatusReport
from samza_nb.notebook.errors import NotebookError, install_one_line_errors, one_line_errors
from samza_nb.notebook.magics import awaiting, cell_config, get, sql, steering
from samza_nb.notebook.magics.browse import BROWSE_ARGS, BrowseReport, browse_stream
from samza_nb.notebook.magics.checkpoints import CheckpointReport
from samza_nb.notebook.magics.parsers import (
    CHECKPOINT_ARGS,
    CLEAN_ARGS,
    DEFINE_ARGS,
    NAME_ARGS,
    PAUSE_ARGS,
    PEEK_ARGS,
    RUN_ARGS,
    SET_ARGS,
    STEP_ARGS,
)
from samza_nb.notebook.magics.task_cell import define_task
from samza_nb.notebook.magics.time_report import TimeReport, time_report
from samza_nb.notebook.session import NotebookSession

if TYPE_CHECKING:
    from samza_nb.notebook.runs.job import JobRun


@magics_class
class SamzaMagics(Magics):
    """``%%samza_config``, ``%%samza_task``, ``%%samza_app``, ``%samza_run``, ``%samza_stop``,
    ``%samza_status``, ``%samza_time``, ``%samza_checkpoints``, ``%samza_clean``, ``%%samza_sql``,
    ``%samza_browse`` and the steering magics ``%samza_pause``, ``%samza_step``, ``%samza_peek``,
    ``%samza_resume``, ``%samza_set`` (and ``%%samza_task --swap``).
    Each instance owns one :class:`NotebookSession`."""

    dashboard = Enum(
        ("auto", "widgets", "text", "off"),
        default_value="auto",
        help="How %samza_run shows a job: auto, widgets, text or off.",
    ).tag(config=True)
    refresh_interval = Float(
        0.2, min=0.05, help="Seconds between dashboard updates (0.2 = at most 5 a second)."
    ).tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        in_kernel = getattr(shell, "kernel", None) is not None  # a job's prints go to its run cell
        self.session = NotebookSession(
            display=display, refresh_s=self.refresh_interval, route_output=in_kernel
        )
        if shell is not None:
            install_one_line_errors(shell)
            awaiting.install(shell)
            shell.events.register("pre_run_cell", self._report_failures)

    def _report_failures(self, *_info: Any) -> None:
        """Before each cell: a background job's failure (one without a dashboard, which would show it), once,
        on stderr (in the cell about to run)."""
        for line in self.session.report_failures():
            print(f"samza_nb: {line}", file=sys.stderr)

    def unregister(self) -> None:
        """Stop reporting into cells (when the extension is reloaded or unloaded)."""
        shell = self.shell
        if shell is not None:
            with contextlib.suppress(ValueError):
                shell.events.unregister("pre_run_cell", self._report_failures)

    def close(self) -> None:
        """Stop this session's jobs and stop reporting into cells: after it, nothing these magics started
        speaks in a cell (the extension's reload and unload, and every test's teardown)."""
        self.session.close()
        self.unregister()

    # -- config and task ----------------------------------------------------------------------------------
    @line_cell_magic
    def samza_config(self, line: str, cell: str | None = None) -> None:
        """``%%samza_config``: the cell's properties become the job's config (replacing the previous one).
        ``%samza_config key=value ...``: set or override keys. ``%samza_config``: show the config."""
        with one_line_errors(self.shell):
            session = self.session
            if cell is not None:
                if line.strip():
                    raise NotebookError(
                        "samza_config: the cell form takes no arguments: put every key in the cell"
                    )
                values = cell_config.parse_config_cell(cell)
                print(session.set_config(values, replace=True))
            elif line.strip():
                values = cell_config.parse_assignments(line)
                print(session.set_config(values, replace=False))
            elif session.config:
                print(cell_config.as_properties(session.config))
                print(f"# {cell_config.summary(session.config)}")
            else:
                print("no job config yet: write a %%samza_config cell")

    @cell_magic
    def samza_task(self, line: str, cell: str) -> None:
        """``%%samza_task [ClassName] [--swap [NAME]]``: the cell defines the task class (in the notebook's
        namespace) for the next ``%samza_run``. With ``--swap``, it also replaces the code of the running
        job (NAME, default the latest) keeping its stores, offsets and timers (all tasks or none)."""
        self._define("samza_task", line, cell)

    @cell_magic
    def samza_app(self, line: str, cell: str) -> None:
        """``%%samza_app [ClassName] [--swap [NAME]]``: the cell defines the job's StreamApplication (a
        subclass of ``samza_nb.operators.StreamApplication``); ``%samza_run`` plans it and runs its
        operators. With ``--swap``, it also replaces the code of the running job (NAME, default the latest)
        keeping its stores, offsets and timers, when its graph keeps its shape (op ids, wiring, streams)."""
        self._define("samza_app", line, cell)

    def _define(self, magic: str, line: str, cell: str) -> None:
        with one_line_errors(self.shell):
            args = DEFINE_ARGS[magic].parse(line)
            requested = args.class_name
            if requested is not None and not requested.isidentifier():
                raise NotebookError(f"{magic}: {requested!r} is not a class name")
            shell = self.shell
            assert shell is not None
            # Line 1 is the magic's line, as the notebook shows it: errors and tracebacks then name the
            # cell's lines as the user sees them.
            source = "\n" + cell
            filename = shell.compile.cache(source, shell.execution_count, raw_code=source)
            application = magic == "samza_app"
            if args.swap is not None:
                print(
                    steering.swap(
                        self.session,
                        args.swap or None,
                        lambda: define_task(
                            source,
                            shell.user_ns,
                            requested=requested,
                            filename=filename,
                            application=application,
                        ),
                        magic,
                    )
                )
                return
            print(
                self.session.define_task(source, shell.user_ns, requested, filename, application=application)
            )

    # -- running ------------------------------------------------------------------------------------------
    @line_magic
    def samza_run(self, line: str) -> None:
        """``%samza_run [--wait | --paused] [--timeout S] [--max-messages N] [--name NAME] [--no-dashboard]
        [--trace] [--runner R] [--record DIR | --replay DIR]``

        Run the job in the background on its own thread (the cell returns at once; the job keeps running while
        other cells run), or with ``--wait`` until every input reached end-of-stream (interrupt the kernel or
        press Stop to stop it gracefully), or ``--paused``: started paused, it processes not one message
        before ``%samza_step`` or ``%samza_resume`` (a job of one container). ``--timeout S`` stops it
        gracefully after S seconds, ``--max-messages N`` after N messages; ``--name NAME`` runs it as job NAME
        (several named jobs may run at once); ``--no-dashboard`` shows one line of text; ``--trace`` records
        every chooser decision in ``samza.decisions`` (it slows the job: for small demonstrations); ``--runner
        spark`` runs the containers as the tasks of one Spark job on the kernel's SparkSession (or a new local
        one), its coordinator in the kernel. ``--record DIR`` writes down the run's schedule (dispatches,
        async completions, timers) and ``--replay DIR`` forces a recorded schedule on a later run, to
        reproduce a race."""
        with one_line_errors(self.shell):
            self._start(line, awaiting=False)

    async def run_awaiting(self, line: str) -> None:
        """``%samza_run --wait`` in a kernel (see :mod:`.awaiting`): start, then wait on the kernel's loop."""
        with one_line_errors(self.shell):
            run = self._start(line, awaiting=True)
            if run is not None:
                await self.session.wait_and_report_async(run)

    def _start(self, line: str, *, awaiting: bool) -> JobRun | None:
        args = RUN_ARGS.parse(line)
        if args.timeout is not None and args.timeout <= 0:
            raise NotebookError("samza_run: --timeout must be a positive number of seconds")
        if args.max_messages is not None and args.max_messages <= 0:
            raise NotebookError("samza_run: --max-messages must be a positive integer")
        if args.paused and args.wait:
            raise NotebookError("samza_run: --paused and --wait: a paused job would never end (pick one)")
        if args.name is not None and not args.name.strip():
            raise NotebookError("samza_run: --name needs a job name")
        self.session.refresh_s = self.refresh_interval
        run = self.session.start(
            wait=args.wait,
            timeout=args.timeout,
            max_messages=args.max_messages,
            ui=self._ui(args.no_dashboard),
            trace=args.trace,
            runner=args.runner,
            name=args.name,
            awaiting=awaiting,
            record=args.record,
            replay=args.replay,
            paused=args.paused,
        )
        return run if args.wait and awaiting else None

    @line_magic
    def samza_stop(self, line: str) -> None:
        """``%samza_stop [NAME]``: stop the named job (default: every running job) gracefully and wait
        for it: in-flight messages finish, every task commits."""
        with one_line_errors(self.shell):
            args = NAME_ARGS["samza_stop"].parse(line)
            message = self.session.stop(args.name)
            if message:
                print(message)

    # -- steering -----------------------------------------------------------------------------------------
    @line_magic
    def samza_pause(self, line: str) -> None:
        """``%samza_pause [NAME] [--timeout S]``: no new message is dispatched; in-flight callbacks complete
        and every task commits (``%%samza_sql`` shows the paused state). Waits until the job is quiet."""
        with one_line_errors(self.shell):
            args = PAUSE_ARGS.parse(line)
            print(steering.pause(self.session, args.name, args.timeout))

    @line_magic
    def samza_step(self, line: str) -> StepsReport:
        """``%samza_step [N] [--name NAME] [--timeout S]``: the paused job processes its next N messages
        (default 1) in the chooser's order; a table of them: task, ssp@offset, why chosen, message,
        outputs and store writes."""
        with one_line_errors(self.shell):
            args = STEP_ARGS.parse(line)
            return steering.step(self.session, args.name, args.n, args.timeout)

    @line_magic
    def samza_peek(self, line: str) -> PeekReport:
        """``%samza_peek [NAME] [--timeout S]``: the message the paused job processes next and why the
        chooser picked it; the decision holds (the next step processes exactly that message)."""
        with one_line_errors(self.shell):
            args = PEEK_ARGS.parse(line)
            return steering.peek(self.session, args.name, args.timeout)

    @line_magic
    def samza_resume(self, line: str) -> None:
        """``%samza_resume [NAME]``: a paused job dispatches again."""
        with one_line_errors(self.shell):
            print(steering.resume(self.session, NAME_ARGS["samza_resume"].parse(line).name))

    @line_magic
    def samza_set(self, line: str) -> None:
        """``%samza_set KEY=VALUE ... [--name NAME]``: change live knobs of the running job at the next
        message boundary (``task.max.concurrency``, ``task.commit.ms``, ``task.window.ms``, stream
        priorities, ``task.consumer.batch.size``); shows the values in force."""
        with one_line_errors(self.shell):
            args = SET_ARGS.parse(line)
            print(steering.set_knobs(self.session, args.name, args.assignments))

    # -- reports ------------------------------------------------------------------------------------------
    @line_magic
    def samza_status(self, line: str) -> StatusReport:
        """``%samza_status [NAME]``: the job's state, tasks, partitions (offsets, lag, end-of-stream),
        decisions and checkpoints (default: the latest job)."""
        with one_line_errors(self.shell):
            return self.session.status(NAME_ARGS["samza_status"].parse(line).name)

    @line_magic
    def samza_time(self, line: str) -> TimeReport:
        """``%samza_time [NAME]``: the job's event time (a job running an application): per input partition
        its watermark and how far it is behind the newest event, naming a partition that holds back the
        watermark; per operator its watermarks and a window's late messages; the open windows (key, start,
        end, so far) and when each fires. The dashboard's "event time" section shows the same."""
        with one_line_errors(self.shell):
            name = NAME_ARGS["samza_time"].parse(line).name
            return time_report(self.session.job(name, "samza_time").run)

    @line_magic
    def samza_checkpoints(self, line: str) -> CheckpointReport | None:
        """``%samza_checkpoints [--reset] [NAME]``: the last checkpoint of every task, and the checkpoints
        the latest run (or job NAME) wrote. ``--reset`` starts the job over, as ``samza-nb reset`` does: its
        checkpoints, its state files and its Spark output generation are dropped, its changelogs start anew,
        and one line says so; refused while it runs (the next run starts from the offset default)."""
        with one_line_errors(self.shell):
            args = CHECKPOINT_ARGS.parse(line)
            report = self.session.checkpoints(reset=args.reset, name=args.name)
            if isinstance(report, str):
                print(report)
                return None
            return report

    @line_magic
    def samza_clean(self, line: str) -> None:
        """``%samza_clean [--dry-run] [--all [--topics]] [NAME]``: remove what the finished job (or job NAME)
        or an old generation of it left, as ``samza-nb clean`` does: old Spark output generations, set-aside
        state files, state files that are a cache; ``--all`` the current generation too (a reset, then its
        files), ``--topics`` its Kafka topics; a few lines say what and how much. Refused while it runs."""
        with one_line_errors(self.shell):
            args = CLEAN_ARGS.parse(line)
            print(self.session.clean(args.name, **{k: v for k, v in vars(args).items() if k != "name"}))

    @cell_magic
    def samza_sql(self, line: str, cell: str) -> Any:
        """``%%samza_sql <store>``: DuckDB SQL over the store's committed contents (a relation named after
        the store: key, value, partition), as a DataFrame."""
        with one_line_errors(self.shell):
            return sql.query(self.session.store_run(line.strip()), line, cell)

    @line_magic
    def samza_browse(self, line: str) -> BrowseReport:
        """``%samza_browse <system.stream> [--partition P] [--from OFFSET] [--key K] [-n N] [--name NAME]``:
        the stream's messages (partition, offset, key, value, headers, timestamp) as a table, decoded
        with the stream's serdes; at most N of each partition (default 20) from OFFSET (default oldest)."""
        with one_line_errors(self.shell):
            return browse_stream(self.session.config_of(BROWSE_ARGS.parse(line).name, "samza_browse"), line)

    @line_magic
    def samza_get(self, line: str) -> None:
        """``%samza_get <store> <key> [--committed] [--name NAME]``: the key's live value in the running
        job's store (``--committed``: as of the last commit), and which container and partition answered."""
        with one_line_errors(self.shell):
            print(get.get(self.session, line))

    # -- helpers ------------------------------------------------------------------------------------------
    def _ui(self, no_dashboard: bool) -> str:
        if no_dashboard:
            return "off"
        mode = str(self.dashboard)
        if mode == "auto":
            in_kernel = getattr(self.shell, "kernel", None) is not None
            return "widgets" if in_kernel and widgets_available() else "text"
        if mode == "widgets" and not widgets_available():
            return "text"
        return mode


__all__ = ["SamzaMagics"]
