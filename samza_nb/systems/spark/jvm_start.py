"""A quick start for the driver JVM of a SparkSession samza_nb makes: C1 only, and a class archive.

Most of a Spark driver's launch on a small machine is the JVM compiling and loading its own start-up code:
on the 2-core machine the project is measured on, a bare ``SparkSession.builder.getOrCreate()`` burns
~30 s of CPU across its threads, most of it in HotSpot's optimising compiler (C2) and in loading and
verifying Spark's ~20,000 classes. Two standard HotSpot options cut it (about 4 x less CPU together, see
docs' benchmarks page):

- ``-XX:TieredStopAtLevel=1``: compile with C1 only. A launch's code runs a few times; C2's work on it never
  pays back. The driver of a samza_nb job plans and schedules; its containers run in Python workers.
- ``-XX:SharedArchiveFile=<archive>``: map the classes a driver loads from a dynamic class-data-sharing
  archive (JDK >= 13) instead of loading and verifying them from Spark's jars.

:func:`build_class_archive` writes the archive once per Java and PySpark installation (``samza-nb
spark-class-archive``, which ``make setup`` runs) by starting a session with ``-XX:ArchiveClassesAtExit``
that runs a small job of each kind the runner submits; it lands under :func:`class_archive_path` only after
that JVM exited cleanly, so a launch never maps a partial one. A different Java, PySpark or Spark jars give
another path (their names and sizes are in its name's hash), so an archive never meets a JVM it was not
made by; the JVM also checks and, when the classpath differs, quietly starts without it
(``-Xshare:auto``).

Under a cluster master the executors' JVMs (started per application, on the way to the first message) get
C1 only too (:func:`executor_java_options`). ``spark.jvm.quick.start = false`` turns all of it off; the
job's own ``spark.conf.spark.driver.extraJavaOptions`` / ``spark.executor.extraJavaOptions`` come after
these options (the last occurrence of an option wins in HotSpot).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from samza_nb.config import Config

QUICK_START_KEY: Final = "spark.jvm.quick.start"
"""The job's key turning the JVMs' quick start on (default) or off: the driver's, and the executors' under a
cluster master."""
DRIVER_OPTIONS_CONF: Final = "spark.driver.extraJavaOptions"
EXECUTOR_OPTIONS_CONF: Final = "spark.executor.extraJavaOptions"
C1_ONLY: Final = "-XX:TieredStopAtLevel=1"
QUIET_CDS: Final = "-Xlog:cds=off,cds+dynamic=off"
"""Without it a JVM that cannot map the archive (another classpath) says so on its standard output."""


def installation_key() -> str | None:
    """A hash of what a class archive depends on: the ``java`` that PySpark starts (``JAVA_HOME``'s, else the
    one on PATH, resolved) with its size and mtime, PySpark's jars directory (the JVM's classpath names it)
    and the names and sizes of its jars; None without PySpark or Java."""
    try:
        import pyspark
    except ImportError:
        return None
    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home, "bin", "java") if java_home else None
    if java is None or not java.exists():
        found = shutil.which("java")
        if found is None:
            return None
        java = Path(found)
    java = java.resolve()
    jars = _jars_directory()
    parts = [
        str(java),
        str(java.stat().st_size),
        str(java.stat().st_mtime_ns),
        pyspark.__version__,
        str(jars),
    ]
    if jars.is_dir():
        parts.extend(f"{jar.name}:{jar.stat().st_size}" for jar in sorted(jars.iterdir()))
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


def archive_directory() -> Path:
    """Where class archives live: ``$SAMZA_NB_CACHE_DIR``, else ``$XDG_CACHE_HOME/samza_nb``, else
    ``~/.cache/samza_nb``."""
    configured = os.environ.get("SAMZA_NB_CACHE_DIR")
    if configured:
        return Path(configured)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "samza_nb"


def class_archive_path() -> Path | None:
    """The class archive of this Java and PySpark (whether or not it was built); None without either."""
    key = installation_key()
    return None if key is None else archive_directory() / f"spark-driver-{key}.jsa"


def driver_java_options(config: Config) -> str | None:
    """The driver JVM's options for a session samza_nb makes from ``config``: C1 only, and the class archive
    when it was built, followed by the job's own ``spark.conf.spark.driver.extraJavaOptions``; None when
    ``spark.jvm.quick.start`` is false (the job's own options, if any, then apply as they are)."""
    if not config.get_bool(QUICK_START_KEY, True):
        return None
    options = [C1_ONLY]
    archive = class_archive_path()
    if archive is not None and archive.is_file():
        options += [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", QUIET_CDS]
    return _with_own(options, config, DRIVER_OPTIONS_CONF)


def executor_java_options(config: Config) -> str | None:
    """The executors' JVM options under a cluster master (an executor is a JVM of its own that a worker
    starts for the application: its start is on the way to the first message): C1 only, followed by the
    job's own ``spark.conf.spark.executor.extraJavaOptions``; None when ``spark.jvm.quick.start`` is false.
    The class archive is the driver's alone: an executor's classpath differs, and a worker of another
    machine has no such file."""
    if not config.get_bool(QUICK_START_KEY, True):
        return None
    return _with_own([C1_ONLY], config, EXECUTOR_OPTIONS_CONF)


def _with_own(options: list[str], config: Config, conf: str) -> str:
    own = (config.get_str(f"spark.conf.{conf}") or "").strip()
    return " ".join([*options, own] if own else options)


_ARCHIVE_JOB: Final = """
import sys
from pyspark.sql import SparkSession, functions as F
spark = (SparkSession.builder.master("local[2]").appName("samza_nb class archive")
         .config("spark.ui.enabled", "false")
         .config("spark.driver.extraJavaOptions", sys.argv[1]).getOrCreate())
key = F.concat(F.lit("k"), (F.col("id") % 17).cast("string"))
rows = spark.range(2000).select(F.col("id"), key.alias("k"))
rows.write.parquet(sys.argv[2] + "/rows")
read = spark.read.parquet(sys.argv[2] + "/rows")
keyed = read.withColumn("p", F.udf(lambda key: len(key) % 2, "int")(F.col("k")))
sorted_rows = keyed.repartition(2, "p").sortWithinPartitions("p", "id")
sorted_rows.write.partitionBy("p").parquet(sys.argv[2] + "/parts")
spark.sparkContext.parallelize(range(2), 2).mapPartitions(lambda rows: [sum(rows)]).collect()
read.agg(F.count(F.lit(1)), F.sum("id")).first()
spark.stop()
"""


def build_class_archive(python: str = sys.executable) -> Path:
    """Build this installation's class archive (see the module) with ``python``'s PySpark and return its
    path; a SamzaError when there is no Java or PySpark, or when the archiving JVM fails (its last line)."""
    from samza_nb.errors import SamzaError

    target = class_archive_path()
    if target is None:
        raise SamzaError("a Spark class archive needs pyspark and a java on PATH (or JAVA_HOME)")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    options = f"{C1_ONLY} -XX:ArchiveClassesAtExit={partial} {QUIET_CDS}"
    with tempfile.TemporaryDirectory(prefix="samza_nb-archive-") as scratch:
        done = subprocess.run(
            [python, "-c", _ARCHIVE_JOB, options, scratch],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, "PYSPARK_PYTHON": python},
        )
    if done.returncode != 0 or not partial.is_file():
        partial.unlink(missing_ok=True)
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        raise SamzaError(
            f"building the Spark class archive {target} failed (exit {done.returncode}): "
            f"{lines[-1] if lines else 'no output'}"
        )
    os.replace(partial, target)
    target.with_suffix(".jars").write_text(str(_jars_directory()), encoding="utf-8")
    prune_class_archives()
    return target


def prune_class_archives() -> list[Path]:
    """Remove the class archives of installations that are gone (the jars directory each was built for,
    kept beside it in ``<archive>.jars``, no longer exists; an archive without that record too, except this
    installation's) and return them: every fresh venv builds its own (~180 MiB)."""
    keep = class_archive_path()
    removed = []
    for archive in sorted(archive_directory().glob("spark-driver-*.jsa")):
        record = archive.with_suffix(".jars")
        source = record.read_text(encoding="utf-8").strip() if record.is_file() else ""
        if archive == keep or (source and Path(source).is_dir()):
            continue
        archive.unlink(missing_ok=True)
        record.unlink(missing_ok=True)
        removed.append(archive)
    return removed


def _jars_directory() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


__all__ = [
    "QUICK_START_KEY",
    "archive_directory",
    "build_class_archive",
    "class_archive_path",
    "driver_java_options",
    "executor_java_options",
    "installation_key",
    "prune_class_archives",
]
