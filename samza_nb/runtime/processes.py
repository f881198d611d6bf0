"""A job as container processes on this machine: a job coordinator in this process and one
``python -m samza_nb container`` process per container of its job model.

The processes learn the coordinator's URL and their id from ``SAMZA_COORDINATOR_URL`` and
``SAMZA_CONTAINER_ID``; each runs in its own session, so a terminal's Ctrl-C reaches this process only
(which forwards what it decides). Their stderr lines are handed to ``on_line``. The first container that
exits non-zero fails the job: the others are stopped gracefully.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from samza_nb.config import Config
from samza_nb.coordinator.client import ID_ENV, JOB_ID_ENV, JOB_NAME_ENV, TOKEN_ENV, URL_ENV
from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.coordinator.status import JobStatus
from samza_nb.runtime.console import PROG

log = logging.getLogger(__name__)

LineHandler = Callable[[str, str], None]
"""Called with (container id, line) for every line a container writes to stderr."""

MAX_LINE_BYTES = 64 * 1024
"""A longer stderr line of a container is cut (the rest is dropped) when relayed."""


@dataclass
class ContainerProcess:
    """One container process, the last line it wrote to stderr, and its exit status once it exited."""

    container_id: str
    process: asyncio.subprocess.Process
    last_line: str = ""
    relay: asyncio.Task[None] | None = None
    out_relay: asyncio.Task[None] | None = None
    exit_status: int | None = None
    sent_sigterm: bool = False

    @property
    def failed(self) -> bool:
        """Exited non-zero, except killed by the SIGTERM this runner sent: a container handles SIGTERM
        (stops gracefully, exits 0) once it runs, so dying of it means it was stopped before it started
        its tasks (nothing processed, nothing to commit)."""
        status = self.exit_status
        return bool(status) and not (self.sent_sigterm and status == -signal.SIGTERM)

    def describe_exit(self) -> str:
        """ "exited with status N" or "was killed by SIGX"."""
        status = self.exit_status or 0
        return (
            f"was killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}"
        )


class ContainerProcesses:
    """The job coordinator of ``config`` and its container processes (see the module).

    ``await start()`` starts the coordinator (its errors propagate: nothing was spawned) and the processes;
    ``await watch(tick, interval_s)`` returns once every process exited, calling ``tick`` every
    ``interval_s``; ``stop`` signals every running process; ``await close()`` kills what still runs and
    stops the coordinator. :attr:`failed` is the first container that failed (see
    :attr:`ContainerProcess.failed`). ``python_path``: directories the processes import from before the
    working directory (e.g. a notebook's task module). ``token``: the token every request to the coordinator
    must carry (see :class:`JobCoordinator`).
    """

    def __init__(
        self,
        config: Config,
        on_line: LineHandler | None = None,
        python_path: Sequence[str] = (),
        token: str | None = None,
    ) -> None:
        self.config = config
        self.python_path = tuple(python_path)
        self.coordinator = JobCoordinator(config, token=token)
        self.children: list[ContainerProcess] = []
        self.failed: ContainerProcess | None = None
        self._on_line = on_line

    @property
    def processed(self) -> int:
        """Messages processed by every container, as last reported to the coordinator."""
        return self.coordinator.job_status().processed

    def status(self) -> JobStatus:
        """Every container's last report."""
        return self.coordinator.job_status()

    async def start(self) -> None:
        """Start the coordinator, then one process per container of its job model."""
        try:
            await self.coordinator.start()
        except BaseException:
            await self.coordinator.stop()
            raise
        env = dict(os.environ)
        env[URL_ENV] = self.coordinator.url
        env.pop(TOKEN_ENV, None)
        env[JOB_NAME_ENV] = self.coordinator.config.job_name()
        env[JOB_ID_ENV] = self.coordinator.config.job_id()
        if self.coordinator.token is not None:
            env[TOKEN_ENV] = self.coordinator.token
        # The task class is imported from the working directory, as in a run in this process.
        path = (*self.python_path, os.getcwd(), env.get("PYTHONPATH", ""))
        env["PYTHONPATH"] = os.pathsep.join(p for p in path if p)
        for cid in sorted(self.coordinator.job_model.containers, key=_numeric):
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "samza_nb",
                "container",
                env={**env, ID_ENV: cid},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
            )
            child = ContainerProcess(cid, process)
            child.relay = asyncio.create_task(self._relay(child))
            child.out_relay = asyncio.create_task(_relay_stdout(process))
            self.children.append(child)

    async def watch(self, tick: Callable[[], None], interval_s: float) -> None:
        """Until every process exited: note exits (the first failure stops the others), call ``tick``."""
        waits = {asyncio.ensure_future(c.process.wait()): c for c in self.children}
        try:
            while waits:
                done, _ = await asyncio.wait(waits, timeout=interval_s)
                for future in done:
                    child = waits.pop(future)
                    child.exit_status = future.result()
                    if child.failed and self.failed is None:
                        self.failed = child
                        self.stop()
                tick()
        finally:
            for future in waits:
                future.cancel()

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Send ``signum`` to every container still running (SIGTERM: each stops gracefully, commits)."""
        for child in self.children:
            if child.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signum)
                    child.sent_sigterm |= signum == signal.SIGTERM

    async def close(self) -> None:
        """Kill what still runs, wait for the stderr relays, stop the coordinator (idempotent)."""
        try:
            for child in self.children:
                if child.process.returncode is None:
                    with contextlib.suppress(ProcessLookupError):
                        child.process.kill()
                    await child.process.wait()
            for child in self.children:
                for relay in (child.relay, child.out_relay):
                    if relay is None:
                        continue
                    try:
                        await relay
                    except Exception as exc:  # a relay's failure must not keep the others running
                        log.warning("relaying container %s's output failed: %r", child.container_id, exc)
        finally:
            await self.coordinator.stop()

    def failure(self) -> str | None:
        """One line on the failed container: the error of its last report (else its last stderr line)
        and how it exited; None when no container failed."""
        child = self.failed
        if child is None:
            return None
        report = self.coordinator.job_status().reports.get(child.container_id)
        detail = report.error if report is not None and report.error else child.last_line
        how = child.describe_exit()
        return (
            f"container {child.container_id} failed: {detail} ({how})"
            if detail
            else (f"container {child.container_id} {how}")
        )

    async def _relay(self, child: ContainerProcess) -> None:
        """Relay the container's stderr line by line. It is read in chunks, never a line at a time: a line
        longer than a buffer must not stop the reading (the container would block writing to a full pipe),
        so a line is cut at :data:`MAX_LINE_BYTES`."""
        stream = child.process.stderr
        assert stream is not None
        pending = bytearray()
        skipping = False  # the rest of a line already cut
        while chunk := await stream.read(65536):
            *ends, tail = chunk.split(b"\n")
            for piece in ends:
                if not skipping:
                    pending += piece
                    self._relay_line(child, bytes(pending[:MAX_LINE_BYTES]))
                pending.clear()
                skipping = False
            if not skipping:
                pending += tail
                if len(pending) > MAX_LINE_BYTES:
                    self._relay_line(child, bytes(pending[:MAX_LINE_BYTES]) + b" [cut]")
                    pending.clear()
                    skipping = True
        if pending and not skipping:
            self._relay_line(child, bytes(pending))

    def _relay_line(self, child: ContainerProcess, line: bytes) -> None:
        text = line.decode(errors="replace").rstrip()
        if text:
            child.last_line = text.removeprefix(f"{PROG}: ").removeprefix(f"container {child.container_id}: ")
            if self._on_line is not None:
                self._on_line(child.container_id, text)


async def _relay_stdout(process: asyncio.subprocess.Process) -> None:
    """Write what a container process prints (its tasks' ``print()``) to this process's ``sys.stdout`` as
    it comes: on a terminal the same, in a notebook into the cell of the run (the job's thread writes it,
    see samza_nb/notebook/runs/cell_output.py), never into whichever cell happens to run."""
    stream = process.stdout
    assert stream is not None
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character may span two chunks
    while chunk := await stream.read(65536):
        sys.stdout.write(decoder.decode(chunk))
        sys.stdout.flush()
    sys.stdout.write(decoder.decode(b"", final=True))


def _numeric(cid: str) -> tuple[int, str]:
    return (int(cid), cid) if cid.isdigit() else (sys.maxsize, cid)


__all__ = ["ContainerProcess", "ContainerProcesses", "LineHandler"]
