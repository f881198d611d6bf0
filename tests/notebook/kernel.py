"""A real Jupyter kernel (ipykernel) driven over its messaging protocol, for tests that need the kernel's
own event loop, its interrupt handling and its comms."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
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

    def run(self, code: str, timeout: float = 60.0, check: bool = True) -> Reply:
        messages: list[dict[str, Any]] = []
        started = time.perf_counter()
        reply = self.client.execute_interactive(code, timeout=timeout, output_hook=messages.append)
        elapsed = (time.perf_counter() - started) * 1000.0
        result = Reply(reply["content"]["status"], elapsed, messages=messages)
        for message in messages:
            content = message["content"]
            if message["msg_type"] == "stream":
                if content["name"] == "stdout":
                    result.stdout += content["text"]
                else:
                    result.stderr += content["text"]
            elif message["msg_type"] == "error":
                result.error = f"{content['ename']}: {content['evalue']}"
        if check and result.status != "ok":
            raise AssertionError(f"cell failed: {result.error or result.stderr}\n{code}")
        return result

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
