"""What a Spark-run job waits for while Spark has fewer task slots than it needs, said instead of "starting".

Under a cluster master the executors register after the SparkContext started, and on a standalone cluster an
application that set no ``spark.cores.max`` takes every free core: a second one then gets no executor until
the first ends. While the runner waits for its slots (:func:`wait_for_slots_telling`, up to
``cluster-manager.container.coordinator.timeout.ms``) it says, in one line, what it waits for: the slots it
needs and has and, on a standalone master whose web UI answers (``http://<master host>:<spark.master.ui.port,
default 8080>/json``), the cluster's free cores and the applications holding the others. The same line ends
the ConfigError when the slots never come.
"""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from samza_nb.runtime.spark.cluster import is_local_master, task_slots

log = logging.getLogger(__name__)

UI_PORT_KEY: Final = "spark.master.ui.port"
"""The standalone master's web UI port (Spark's own setting; read from the driver's SparkConf)."""
DEFAULT_UI_PORT: Final = "8080"
TELL_EVERY_S: Final = 2.0
"""How often the line is looked at again while the wait lasts (it is told when it changed)."""
POLL_S: Final = 0.1
REQUEST_TIMEOUT_S: Final = 2.0


@dataclass(frozen=True)
class SlotWait:
    """What the job waits for: ``line`` says it; ``holders`` are the other applications holding cores of a
    standalone master (empty when none does or the master does not say)."""

    line: str
    holders: tuple[str, ...] = ()


def wait_for_slots_telling(
    context: Any, needed: int, timeout_s: float, tell: Callable[[SlotWait | None], None]
) -> tuple[int, SlotWait | None]:
    """Wait (up to ``timeout_s``) until Spark has ``needed`` task slots, as
    :func:`~.cluster.wait_for_slots` does, calling ``tell`` with :func:`describe_wait` when the wait
    begins and whenever it changes, and with None when it ends. (slots, the last wait: None when the slots
    came at once)."""
    slots = task_slots(context)
    if is_local_master(str(context.master)) or slots >= needed:
        return slots, None
    deadline = time.monotonic() + timeout_s
    line: SlotWait | None = None
    told_at = float("-inf")
    try:
        while slots < needed and time.monotonic() < deadline:
            if time.monotonic() - told_at >= TELL_EVERY_S:
                told_at = time.monotonic()
                now = describe_wait(context, needed, slots)
                if now != line:
                    line = now
                    tell(line)
            time.sleep(POLL_S)  # executors register with the driver asynchronously: polling the scheduler
            slots = task_slots(context)
    finally:
        tell(None)
    return slots, line


def describe_wait(context: Any, needed: int, slots: int) -> SlotWait:
    """The slots needed and had, and what the standalone master says of its cores (free, and which other
    applications hold how many) when it answers, in one line."""
    line = f"waiting for {needed} Spark task slots, has {slots} (master {context.master})"
    state = master_state(context)
    if state is None:
        return SlotWait(line)
    own = str(context.applicationId)
    cores, used = int(state.get("cores", 0)), int(state.get("coresused", 0))
    holders = [
        f"{app.get('id')} {app.get('name')!r} ({app.get('cores', '?')} cores)"
        for app in state.get("activeapps", [])
        if app.get("id") != own and int(app.get("cores", 0) or 0) > 0
    ]
    held = f"; held by {', '.join(holders)}" if holders else ""
    fix = "; they free them when they end (or set spark.cores.max on them)" if holders else ""
    return SlotWait(f"{line}: {cores - used} of the cluster's {cores} cores free{held}{fix}", tuple(holders))


def master_state(context: Any) -> dict[str, Any] | None:
    """The standalone master's ``/json`` (cores, applications); None for another master or when its web UI
    does not answer."""
    found = re.match(r"spark://([^:/,]+)", str(context.master))
    if found is None:
        return None
    try:
        port = context.getConf().get(UI_PORT_KEY, DEFAULT_UI_PORT)
        url = f"http://{found.group(1)}:{port}/json"
        with urllib.request.urlopen(url, timeout=REQUEST_TIMEOUT_S) as answer:
            state = json.loads(answer.read().decode("utf-8"))
    except Exception as exc:  # no web UI there: the line says what the driver knows
        log.debug("the standalone master's state is not readable: %s", exc)
        return None
    return state if isinstance(state, dict) else None


__all__ = ["SlotWait", "describe_wait", "master_state", "wait_for_slots_telling"]
