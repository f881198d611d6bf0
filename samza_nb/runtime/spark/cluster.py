"""What the Spark runner asks of Spark's scheduler, and how its containers reach the job coordinator when
they run on other machines (a master that is not ``local[...]``).

Under a cluster master the coordinator binds ``cluster-manager.jobcoordinator.host`` (default: the driver's
``spark.driver.host``, the address Spark's executors already reach the driver at) instead of 127.0.0.1, and
every request must carry the job's token, also when that address is a loopback one (another user's executor
on the driver's machine reaches loopback too). The token travels to each container in its Spark task's
closure (``SAMZA_COORDINATOR_TOKEN`` in the container's environment), never in the config or the URL.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import secrets
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

HOST_KEY = "cluster-manager.jobcoordinator.host"


def is_local_master(master: str) -> bool:
    """True for Spark's local masters (``local``, ``local[N]``, ``local[N,F]``, ``local-cluster[...]`` is a
    cluster on this machine, so False)."""
    return master == "local" or master.startswith("local[")


def local_workers_run_this_python(config: Config) -> None:
    """Before the runner makes a session of its own under a local master (``spark.master``, default local)
    with no Python for its workers configured (``PYSPARK_PYTHON``, ``spark.conf.spark.pyspark.python``):
    its workers run this process' Python (the same machine). A cluster's workers run the Python Spark is
    configured with."""
    master = (config.get_str("spark.master") or "").strip() or "local"
    configured = "PYSPARK_PYTHON" in os.environ or "spark.conf.spark.pyspark.python" in config
    if is_local_master(master) and not configured:
        os.environ["PYSPARK_PYTHON"] = sys.executable


def driver_host(context: Any) -> str | None:
    """``spark.driver.host`` of the running SparkContext (the address executors reach the driver at)."""
    try:
        host = context.getConf().get("spark.driver.host")
    except Exception as exc:  # another SparkContext flavour
        log.debug("spark.driver.host is not readable: %s", exc)
        return None
    return str(host) if host else None


def coordinator_reach(config: Config, context: Any) -> tuple[Config, str | None]:
    """The config the job coordinator runs with and the token it requires (see the module): unchanged and
    None under a local master."""
    if is_local_master(str(context.master)):
        return config, None
    if HOST_KEY not in config:
        host = driver_host(context)
        if host:
            config = config.with_overrides({HOST_KEY: host})
    return config, secrets.token_urlsafe(32)


def container_url(url: str, context: Any) -> str:
    """The coordinator's URL as the containers use it: a wildcard bind address (``0.0.0.0``, ``::``) is
    replaced by ``spark.driver.host`` (else 127.0.0.1)."""
    found = re.fullmatch(r"(https?://)\[?([^\]/]+?)\]?(:\d+)(/.*)?", url)
    if found is None:
        return url
    scheme, host, port, rest = found.groups()
    try:
        wildcard = ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return url
    if not wildcard:
        return url
    reachable = driver_host(context) or "127.0.0.1"
    if ":" in reachable:
        reachable = f"[{reachable}]"
    return f"{scheme}{reachable}{port}{rest or ''}"


def task_slots(context: Any) -> int:
    """How many tasks Spark can run at once: what its barrier scheduling counts (executors' cores over
    ``spark.task.cpus``), not ``defaultParallelism`` (which ``spark.default.parallelism`` overrides)."""
    try:
        jvm_context = context._jsc.sc()
        profile = jvm_context.resourceProfileManager().defaultResourceProfile()
        return int(jvm_context.maxNumConcurrentTasks(profile))
    except Exception as exc:  # another Spark build: the documented figure
        log.debug("maxNumConcurrentTasks is not available (%s): using defaultParallelism", exc)
        return int(context.defaultParallelism)


def wait_for_slots(context: Any, needed: int, timeout_s: float) -> int:
    """:func:`task_slots` once it reaches ``needed``: under a cluster master executors register after the
    SparkContext started, so this waits for them up to ``timeout_s`` (then returns what there is)."""
    slots = task_slots(context)
    if is_local_master(str(context.master)):
        return slots
    deadline = time.monotonic() + timeout_s
    while slots < needed and time.monotonic() < deadline:
        time.sleep(0.1)  # executors register with the driver asynchronously: polling the scheduler's count
        slots = task_slots(context)
    return slots


def task_attempts(context: Any) -> int:
    """How often Spark runs a failing task: F of ``local[N,F]``; 1 for another local master (Spark's
    local mode does not retry); else ``spark.task.maxFailures`` (default 4)."""
    master = str(context.master)
    found = re.fullmatch(r"local\[[^,\]]+,\s*(\d+)\]", master)
    if found:
        return int(found.group(1))
    if master.startswith("local"):
        return 1
    return int(context.getConf().get("spark.task.maxFailures", "4"))


__all__ = [
    "HOST_KEY",
    "container_url",
    "coordinator_reach",
    "driver_host",
    "is_local_master",
    "local_workers_run_this_python",
    "task_attempts",
    "task_slots",
    "wait_for_slots",
]
