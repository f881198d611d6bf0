"""Booting Spark's Python workers while the job coordinator starts: :class:`PythonWarmup`.

A Spark task in Python runs in a Python worker that Spark's Python daemon forks on its executor; the first
Python task of an executor starts that daemon (an interpreter importing PySpark) and the worker (~1-2.5 s on
a 2-core machine). The containers' job is the first Python job of a runner's session unless the input was
written with Spark, so that boot used to come after the coordinator's start, on the way to the first
message. The warm-up is a tiny Python job of one task per slot the containers need, submitted in a thread
of its own as soon as the slots are there: it runs while the coordinator starts, and each task imports
the module the containers' tasks run (:mod:`.task`), so their workers (Spark reuses an idle worker,
``spark.python.worker.reuse``, true by default) have it loaded. Nothing depends on it: when it fails (a
worker's Python without samza_nb) the containers' job fails with the one-line error it always gave.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

log = logging.getLogger(__name__)


def warmup_task() -> Callable[[Iterable[int]], Iterator[int]]:
    """The warm-up's task function: it loads the containers' task module in its worker and yields 1 (0 when
    the worker cannot import it: the containers' job says why). A closure, so cloudpickle pickles it by
    value and a worker without samza_nb can unpickle it."""

    def import_task(_: Iterable[int]) -> Iterator[int]:
        try:
            import samza_nb.runtime.spark.task  # noqa: F401 (loaded for the next task of this worker)
        except ImportError:
            yield 0
        else:
            yield 1

    return import_task


class PythonWarmup:
    """Runs the warm-up job for ``slots`` tasks on ``context`` in a background thread (see the module), in
    the runner's job ``group`` (cancelling the group cancels it too): ``start()`` returns at once,
    ``wait(timeout)`` until it ended (True) or ``timeout`` passed; it never raises."""

    def __init__(self, context: Any, slots: int, group: str) -> None:
        self.context = context
        self.slots = max(1, slots)
        self.group = group
        self._thread = threading.Thread(target=self._run, name=f"{group}-python-warmup", daemon=True)

    def start(self) -> None:
        """Submit the warm-up job in its thread."""
        self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """True once the warm-up job ended (or was never started)."""
        if not self._thread.is_alive():
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            self.context.setJobGroup(self.group, "samza_nb: boot Python workers", interruptOnCancel=True)
            self.context.parallelize(range(self.slots), self.slots).mapPartitions(warmup_task()).collect()
        except Exception as exc:  # the containers' job reports what is wrong with the workers
            log.debug("the Python warm-up job failed: %s", exc)


__all__ = ["PythonWarmup", "warmup_task"]
