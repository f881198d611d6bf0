"""The driver's SparkSession: the active one, or one built from the job's config.

``spark.master`` (default ``local[<containers>,4]``: a slot per container, a task retried up to 4 times) and
``spark.conf.<key> = <value>`` configure a session this module builds; the UI is off unless
``spark.conf.spark.ui.enabled`` says otherwise, and its driver JVM starts quickly (:mod:`.jvm_start`). An
active session (a notebook's, a test's) is used as it is.
With ``jvm_log``, the JVM of a session this module starts writes its output (Spark's start-up lines and
log, its Python workers' and the containers' standard error) to that file instead of the terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.errors import ConfigError
from samza_nb.systems.spark.jvm_start import (
    DRIVER_OPTIONS_CONF,
    EXECUTOR_OPTIONS_CONF,
    driver_java_options,
    executor_java_options,
)
from samza_nb.systems.spark.settings import job_directory, job_key

if TYPE_CHECKING:
    from samza_nb.config import Config

MASTER_KEY = "spark.master"
CONF_PREFIX = "spark.conf."
WORKER_PYTHON_MISSING = "samza_nb is not importable by the Python of Spark's workers"
"""How the error of a Spark job whose workers cannot import samza_nb starts (:func:`worker_python_error`)."""
WORKER_PYTHON_KEY = "spark.conf.spark.pyspark.python"
"""The job's key naming the Python of Spark's workers for a session this module builds."""
WORKER_PYTHON_FIX = (
    f"install samza_nb there, or name a Python that has it: {WORKER_PYTHON_KEY} in the job's config when the "
    "runner makes the SparkSession; for a SparkSession of your own, the PYSPARK_PYTHON environment variable "
    "before you create it (or spark-submit --conf spark.pyspark.python=...)"
)
"""What the error says works (PySpark takes its workers' Python only from ``PYSPARK_PYTHON`` when a session
is made in Python: the ``spark.pyspark.python`` setting of a session built there is ignored)."""


def import_pyspark_sql() -> Any:
    """``pyspark.sql``; a ConfigError saying how to install it when pyspark is missing."""
    try:
        import pyspark.sql as sql
    except ImportError as exc:
        raise ConfigError(
            f"this job needs pyspark ({exc}): install the spark extra, pip install 'samza-nb[spark]'"
        ) from exc
    return sql


def spark_session(
    config: Config, containers: int = 1, *, jvm_log: str | os.PathLike[str] | None = None
) -> Any:
    """The active SparkSession, else a new one built from ``config`` whose JVM writes to ``jvm_log`` when
    given (see the module); its workers run the Python ``spark.conf.spark.pyspark.python`` names, when set
    (PySpark itself reads only ``PYSPARK_PYTHON``: it is set while the session is made)."""
    sql = import_pyspark_sql()
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        return active
    master = (config.get_str(MASTER_KEY, "") or "").strip() or f"local[{max(1, containers)},4]"
    builder = sql.SparkSession.builder.master(master).appName(config.job_name())
    builder = builder.config("spark.ui.enabled", "false")
    for key in sorted(config):
        if key.startswith(CONF_PREFIX):
            builder = builder.config(key.removeprefix(CONF_PREFIX), config[key])
    for conf, options in (
        (DRIVER_OPTIONS_CONF, driver_java_options(config)),
        (EXECUTOR_OPTIONS_CONF, executor_java_options(config)),
    ):
        if options is not None:
            builder = builder.config(conf, options)
    with _worker_python(config):
        if jvm_log is None:
            return builder.getOrCreate()
        with _output_to(Path(jvm_log)):
            return builder.getOrCreate()


def worker_python_error(text: str) -> ConfigError | None:
    """The one-line error for a Spark job's failure ``text`` (its exception as text) when a worker's Python
    could not import samza_nb (a ``ModuleNotFoundError`` of it, or a line starting
    :data:`WORKER_PYTHON_MISSING`); None for any other failure."""
    for line in text.splitlines():
        if WORKER_PYTHON_MISSING in line:
            return ConfigError(line[line.index(WORKER_PYTHON_MISSING) :].strip(), key=WORKER_PYTHON_KEY)
    if "No module named 'samza_nb" not in text:
        return None
    return ConfigError(f"{WORKER_PYTHON_MISSING}: {WORKER_PYTHON_FIX}", key=WORKER_PYTHON_KEY)


def jvm_log_path(config: Config) -> Path:
    """Where a quiet run puts the output of its Spark JVM: ``<job.logged.store.base.dir>/<job.name>-<job.id>/
    spark-driver.log`` (the driver's own disk)."""
    return job_directory(config) / job_key(config) / "spark-driver.log"


@contextmanager
def _worker_python(config: Config) -> Iterator[None]:
    """While a session is made: ``PYSPARK_PYTHON`` is the Python ``spark.conf.spark.pyspark.python`` names
    (when set; the SparkContext keeps it), and what it was afterwards."""
    python = (config.get_str(WORKER_PYTHON_KEY) or "").strip()
    if not python:
        yield
        return
    before = os.environ.get("PYSPARK_PYTHON")
    os.environ["PYSPARK_PYTHON"] = python
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYSPARK_PYTHON", None)
        else:
            os.environ["PYSPARK_PYTHON"] = before


@contextmanager
def _output_to(path: Path) -> Iterator[None]:
    """While the JVM starts, this process' standard output and error are ``path`` (appended): the JVM keeps
    them, this process gets its own back."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    saved = (os.dup(1), os.dup(2))
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in (*saved, log):
            os.close(descriptor)


__all__ = [
    "CONF_PREFIX",
    "MASTER_KEY",
    "WORKER_PYTHON_FIX",
    "WORKER_PYTHON_KEY",
    "WORKER_PYTHON_MISSING",
    "import_pyspark_sql",
    "jvm_log_path",
    "spark_session",
    "worker_python_error",
]
