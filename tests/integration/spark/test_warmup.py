"""The runner's Python warm-up (:mod:`samza_nb.runtime.spark.warmup`) on the session's local[2,2] Spark: its
tasks leave Spark's Python workers with the containers' task module loaded, and a worker that cannot import
samza_nb makes it end quietly (the containers' job reports that, in one line)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from samza_nb.runtime.spark.warmup import PythonWarmup, warmup_task


def worker_state(_: Iterable[int]) -> Iterator[tuple[int, bool]]:
    yield os.getpid(), "samza_nb.runtime.spark.task" in sys.modules


def test_the_warmup_leaves_the_workers_with_the_task_module_loaded(spark: Any) -> None:
    context = spark.sparkContext
    warmup = PythonWarmup(context, 2, "samza-nb-test-warmup")
    warmup.start()
    assert warmup.wait(120)
    after = context.parallelize(range(2), 2).mapPartitions(worker_state).collect()
    assert all(loaded for _, loaded in after), after


def test_the_warmup_task_yields_zero_where_samza_nb_is_not_importable() -> None:
    import samza_nb.runtime.spark.task as saved

    del sys.modules["samza_nb.runtime.spark.task"]
    sys.modules["samza_nb.runtime.spark.task"] = None  # type: ignore[assignment] # import fails
    try:
        assert list(warmup_task()([0])) == [0]
    finally:
        sys.modules["samza_nb.runtime.spark.task"] = saved
    assert list(warmup_task()([0])) == [1]
