"""A real Jupyter kernel (ipykernel) driven over its messaging protocol, for tests that need the kernel's
own event loop, its interrupt handling and its comms."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Reply:
    """What one executed cell produced."""

    status: str
    elapsed_ms: float
    stdout: str = ""
    stderr: str = ""
    error: str = ""
    messages: list[dict[str, Any]] = field(default_factory=list)

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The iopub messages of one type (``display_data``, ``comm_open``, ...)."""
        return [m for m in self.messages if m["msg_type"] == kind]


def _reply(reply: dict[str, Any], messages: list[dict[str, Any]], elapsed_ms: float) -> Reply:
    result = Reply(reply["content"]["status"], elapsed_ms, messages=messages)
    for message in messages:
        content = message["content"]
        if message["msg_type"] == "stream":
            if content["name"] == "stdout":
                result.stdout += content["text"]
            else:
                result.stderr += content["text"]
        elif message["msg_type"] == "error":
            result.error = f"{content['ename']}: {content['evalue']}"
    return result


class Kernel:
    """A python3 kernel of this environment (in ``cwd``, with ``env``, when given); ``run(code)`` executes a
    cell and waits for its reply."""

    def __init__(self, cwd: str | None = None, env: dict[str, str] | None = None) -> None:
        import jupyter_client

        self.manager = jupyter_client.KernelManager(kernel_name="python3")
        options: dict[str, Any] = {}
        if cwd is not None:
            options["cwd"] = cwd
        if env is not None:
            options["env"] = env
        self.manager.start_kernel(**options)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.display_updates: list[dict[str, Any]] = []
        """Every ``update_display_data`` seen while waiting for a cell, whatever its parent: a display is
        updated by its id, and an update sent from a job's thread may carry the header of whichever
        message the kernel was handling (a widget's click) rather than of the cell that showed it."""

    def run(self, code: str, timeout: float = 60.0, check: bool = True) -> Reply:
        messages: list[dict[str, Any]] = []
        started = time.perf_counter()
        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=messages.append)
        elapsed = (time.perf_counter() - started) * 1000.0
        result = _reply(reply, messages, elapsed)
        if check and result.status != "ok":
            raise AssertionError(f"cell failed: {result.error or result.stderr}\n{code}")
        return result

    def start(self, code: str) -> str:
        """Send a cell without waiting for it; its msg_id (see :meth:`iopub_until` and :meth:`reply`)."""
        return str(self.client.execute(code))

    def iopub_until(self, msg_id: str, predicate: Any, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The iopub messages of cell ``msg_id`` up to the first one for which ``predicate`` is true;
        AssertionError after ``timeout`` seconds."""
        seen: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = self.client.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            except Exception:  # queue.Empty
                break
            if message["msg_type"] == "update_display_data":
                self.display_updates.append(message)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            seen.append(message)
            if predicate(message):
                return seen
        raise AssertionError(f"no such iopub message within {timeout} s; seen: {seen}")

    def reply(self, msg_id: str, timeout: float = 60.0) -> Reply:
        """Wait for the execute reply of cell ``msg_id`` (iopub messages until it is idle included)."""
        messages = self.iopub_until(
            msg_id,
            lambda m: m["msg_type"] == "status" and m["content"]["execution_state"] == "idle",
            timeout,
        )
        reply = self.client.get_shell_msg(timeout=timeout)
        while reply["parent_header"].get("msg_id") != msg_id:
            reply = self.client.get_shell_msg(timeout=timeout)
        return _reply(reply, messages, 0.0)

    def comm_msg(self, comm_id: str, data: dict[str, Any]) -> None:
        """Send a widget message to the kernel, as a front-end does (e.g. a button's click)."""
        content = {"comm_id": comm_id, "data": data}
        self.client.shell_channel.send(self.client.session.msg("comm_msg", content))

    def value(self, expression: str) -> Any:
        """``expression`` evaluated in the kernel (its repr, read back with eval)."""
        out = self.run(f"print(repr({expression}))").stdout.strip()
        return eval(out)

    def interrupt(self) -> None:
        """What Jupyter's interrupt button does (SIGINT to the kernel process)."""
        self.manager.interrupt_kernel()

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


@contextlib.contextmanager
def repository_kernel(cwd: str, setup: str = "%load_ext samza_nb") -> Iterator[Kernel]:
    """A kernel working in ``cwd`` that (with the container processes it starts) can import this
    repository (``task.class = tests.notebook.sample_tasks...``), after running ``setup``."""
    root = str(Path(__file__).parents[2])
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    kernel = Kernel(cwd=cwd, env=dict(os.environ, PYTHONPATH=path))
    try:
        kernel.run(setup)
        yield kernel
    finally:
        kernel.close()
