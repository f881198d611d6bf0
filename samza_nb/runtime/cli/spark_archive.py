"""``samza-nb spark-class-archive``: build the class archive the driver JVM of a Spark run maps at launch
(:mod:`samza_nb.systems.spark.jvm_start`); ``--path`` prints where it is (or would be) and builds nothing."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from samza_nb.errors import SamzaError


def add_spark_class_archive_command(commands: Any) -> None:
    """Add ``samza-nb spark-class-archive [--path]`` to the CLI's subparsers."""
    command = commands.add_parser(
        "spark-class-archive",
        help="build the Spark driver's class archive (a quicker launch of --runner spark)",
        description="Start a SparkSession once, run a small job of each kind the Spark runner submits and "
        "archive the classes its JVM loaded (class-data sharing), so the driver of every later Spark run "
        "maps them instead of loading them (spark.jvm.quick.start). One archive per Java and PySpark "
        "installation, under $SAMZA_NB_CACHE_DIR (default ~/.cache/samza_nb); make setup builds it.",
    )
    command.add_argument("--path", action="store_true", help="print the archive's path; build nothing")
    command.set_defaults(handler=spark_class_archive_command)


def spark_class_archive_command(args: argparse.Namespace) -> int:
    """Build the archive (or print its path) and say where it is; 1 with one line when it cannot be built."""
    from samza_nb.systems.spark.jvm_start import build_class_archive, class_archive_path

    if args.path:
        path = class_archive_path()
        if path is None:
            print("samza-nb: no archive: pyspark or java is missing", file=sys.stderr)
            return 1
        print(f"{path} ({'built' if path.is_file() else 'not built'})")
        return 0
    started = time.monotonic()
    try:
        path = build_class_archive()
    except SamzaError as exc:
        print(f"samza-nb: {exc}", file=sys.stderr)
        return 1
    size = path.stat().st_size / 2**20
    print(f"built {path} ({size:.0f} MiB) in {time.monotonic() - started:.1f} s")
    return 0


__all__ = ["add_spark_class_archive_command", "spark_class_archive_command"]
