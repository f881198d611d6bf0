"""A Spark standalone cluster on this machine for the cluster tests: a master and two workers.

Everything binds 127.0.0.1 (``SPARK_LOCAL_IP``, ``--host``; the master's REST server is off). Each worker runs
in a mount namespace of its own (``unshare -m --propagation private``) where a tmpfs hides the driver's
private directories (``hidden``: the test's temp dirs, the job state dirs), as separate hosts would, and
it sees ONE shared directory (:attr:`SparkCluster.shared`) at the same path as the driver. Workers run the
given Python as ``PYSPARK_PYTHON``.

Every process of the cluster (master, workers, their executors, Python workers and the containers those
start) inherits the environment variable :data:`MARKER_ENV` with this cluster's value: that is how
:meth:`SparkCluster.processes` finds them (and only them) to kill or to check that none is left.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

MARKER_ENV = "SAMZA_NB_TEST_CLUSTER"
"""Set to the cluster's id in the environment of every process of the cluster."""
START_TIMEOUT_S = 90.0
"""How long the master and the workers may take to start (a JVM each, on a loaded 2-core machine)."""
EXECUTOR_CLASS = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"


class ClusterError(RuntimeError):
    """The cluster could not start (the log's tail says why)."""


def spark_home() -> Path:
    """The Spark distribution inside the pyspark wheel (its ``bin/spark-class``)."""
    import pyspark

    return Path(pyspark.__file__).parent


class SparkCluster:
    """A standalone master and ``workers`` workers of ``cores`` cores each (see the module); ``start()``,
    then :attr:`master_url`; ``stop()`` kills every process of it (idempotent)."""

    def __init__(
        self, python: str, hidden: Sequence[Path], *, workers: int = 2, cores: int = 2, memory: str = "1g"
    ) -> None:
        self.python = python
        self.hidden = [Path(p) for p in hidden]
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.id = uuid.uuid4().hex[:12]
        self.root = Path(tempfile.mkdtemp(prefix="samza-nb-cluster-"))
        self.shared = self.root / "shared"
        """The directory driver and workers share (same path everywhere)."""
        self.master_url = ""
        self.web_ui_port = 0
        """The master's web UI port (its ``/json`` lists the applications and their cores)."""
        self._started: list[subprocess.Popen[bytes]] = []
        self.worker_pids: list[int] = []

    # -- lifecycle ------------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the master, then the workers; returns once every worker registered with the master."""
        for name in ("shared", "conf", "master"):
            (self.root / name).mkdir(exist_ok=True)
        master_log = self.root / "master" / "master.log"
        self._spawn(
            ["bin/spark-class", MASTER_CLASS, "--host", "127.0.0.1", "--port", "0", "--webui-port", "0"],
            master_log,
        )
        found = self._wait_for(master_log, r"Starting Spark master at (spark://\S+)")
        self.master_url = found.group(1)
        ui = self._wait_for(master_log, r"MasterWebUI\b.*started at http://[^:\s]+:(\d+)")
        self.web_ui_port = int(ui.group(1))
        for n in range(self.workers):
            self.worker_pids.append(self._spawn_worker(n))
        for n in range(self.workers):
            self._wait_for(self.root / f"worker-{n}" / "worker.log", r"Successfully registered with master")

    def _spawn_worker(self, n: int) -> int:
        work = self.root / f"worker-{n}"
        work.mkdir(exist_ok=True)
        log = work / "worker.log"
        mounts = " && ".join(f"mount -t tmpfs samza-nb-hidden {_quote(p)}" for p in self.hidden if p.is_dir())
        command = (
            f"{mounts + ' && ' if mounts else ''}exec bin/spark-class {WORKER_CLASS} --host 127.0.0.1 "
            f"--port 0 --webui-port 0 --cores {self.cores} --memory {self.memory} "
            f"--work-dir {_quote(work)} {self.master_url}"
        )
        process = self._spawn(
            ["unshare", "-m", "--propagation", "private", "sh", "-c", command],
            log,
            SPARK_LOCAL_DIRS=str(work),
        )
        return process.pid

    def restart_worker(self, n: int) -> None:
        """Start worker ``n`` again (after :meth:`kill_whole_worker`); returns once it registered."""
        for process in [p for p in self._started if p.pid == self.worker_pids[n]]:
            process.wait(timeout=30)  # killed: reaped, and no longer a process of the cluster that must live
            self._started.remove(process)
        self.worker_pids[n] = self._spawn_worker(n)  # its log starts anew
        self._wait_for(self.root / f"worker-{n}" / "worker.log", r"Successfully registered with master")

    def stop(self) -> None:
        """Kill -9 every process of the cluster, then remove its directory (idempotent)."""
        for _ in range(3):  # a dying executor's worker may start another one meanwhile
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for process in self._started:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=10)
            if not self.processes():
                break
        shutil.rmtree(self.root, ignore_errors=True)

    # -- what the tests look at -----------------------------------------------------------------------------
    def processes(self) -> list[int]:
        """Every live process of this cluster (by :data:`MARKER_ENV`), zombies excepted."""
        wanted = f"{MARKER_ENV}={self.id}".encode()
        found = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as env:
                    if wanted not in env.read().split(b"\0"):
                        continue
                with open(f"/proc/{entry.name}/stat") as stat:
                    if stat.read().rsplit(")", 1)[-1].split()[0] == "Z":
                        continue
            except OSError:
                continue
            found.append(int(entry.name))
        return found

    def processes_running(self, needle: str) -> list[int]:
        """The processes of this cluster whose command line contains ``needle``."""
        found = []
        for pid in self.processes():
            with contextlib.suppress(OSError), open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if needle in cmdline.read().replace(b"\0", b" ").decode(errors="replace"):
                    found.append(pid)
        return found

    def executors(self) -> list[int]:
        """The pids of the executor JVMs (``CoarseGrainedExecutorBackend``) running now."""
        return self.processes_running(EXECUTOR_CLASS)

    def containers(self) -> list[int]:
        """The pids of the container processes (``python -m samza_nb container``) running on the workers."""
        return self.processes_running("-m samza_nb container")

    def kill_executor(self, pid: int) -> None:
        """Kill -9 the executor JVM ``pid`` (as a lost machine would)."""
        if pid not in self.executors():
            raise ValueError(f"{pid} is not an executor of this cluster")
        os.kill(pid, signal.SIGKILL)

    def worker_of(self, pid: int) -> int:
        """The number of the worker process ``pid`` (an executor, a container) runs under."""
        current = pid
        while current > 1:
            if current in self.worker_pids:
                return self.worker_pids.index(current)
            with open(f"/proc/{current}/stat") as stat:
                current = int(stat.read().rsplit(")", 1)[-1].split()[1])
        raise ValueError(f"{pid} runs under no worker of this cluster")

    def kill_whole_worker(self, n: int) -> list[int]:
        """Kill -9 worker ``n``'s JVM and every process under it (its executors, their Python workers and
        containers) at once, as a lost machine; the pids killed."""
        victims = []
        for pid in self.processes():
            with contextlib.suppress(ValueError, OSError):
                if self.worker_of(pid) == n:
                    victims.append(pid)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        return victims

    def kill_worker(self, n: int) -> None:
        """Kill -9 worker ``n``'s JVM (its executors notice and exit)."""
        os.kill(self.worker_pids[n], signal.SIGKILL)

    def describe(self) -> str:
        """The last lines of every log of the cluster (for a failing test's message)."""
        parts = []
        for log in sorted(self.root.rglob("*.log")) + sorted(self.root.rglob("stderr")):
            with contextlib.suppress(OSError):
                lines = log.read_text(errors="replace").splitlines()
                tail = [line for line in lines if "[container " in line][-40:] + lines[-15:]
                parts.append(f"== {log.relative_to(self.root)}\n" + "\n".join(tail))
        return "\n".join(parts)

    # -- helpers ------------------------------------------------------------------------------------------
    def _spawn(self, args: list[str], log: Path, **extra: str) -> subprocess.Popen[bytes]:
        env = {
            **os.environ,
            MARKER_ENV: self.id,
            "SPARK_HOME": str(spark_home()),
            "SPARK_CONF_DIR": str(self.root / "conf"),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(log.parent),
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_MASTER_OPTS": "-Dspark.master.rest.enabled=false",
            "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false",
            "PYSPARK_PYTHON": self.python,
            **extra,
        }
        env.pop("PYTHONPATH", None)  # a worker imports what its Python has, not the test run's path
        with open(log, "wb") as out:
            process = subprocess.Popen(
                args,
                cwd=spark_home(),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._started.append(process)
        return process

    def _wait_for(self, log: Path, pattern: str) -> re.Match[str]:
        """Poll ``log`` until ``pattern`` appears in it; ClusterError (with the log) when a process of the
        cluster exited first or after :data:`START_TIMEOUT_S`."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            text = log.read_text(errors="replace") if log.exists() else ""
            found = re.search(pattern, text)
            if found:
                return found
            dead = [p.args for p in self._started if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"{dead[0]!r} exited" if dead else f"no {pattern!r} within {START_TIMEOUT_S:g} s"
                raise ClusterError(f"the Spark cluster did not start: {why}; {log}:\n{text[-3000:]}")
            time.sleep(0.1)  # polling a log file the JVM writes: the line decides


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
