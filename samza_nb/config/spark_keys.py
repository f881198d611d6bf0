"""The configuration keys of Spark systems (docs/architecture.md §13), part of the key catalogue."""

from __future__ import annotations

from samza_nb.config.key_spec import KeySpec

_STREAM = "systems.<system>.streams.<stream>.spark"

SPARK_KEYS: tuple[KeySpec, ...] = (
    KeySpec(f"{_STREAM}.path", None, "str", "Spark: files of a bounded input stream."),
    KeySpec(
        f"{_STREAM}.format",
        "parquet",
        "choice",
        "Spark: format of spark.path (parquet is read without Spark unless spark.partitions is set).",
        choices=("parquet", "orc", "json", "csv", "text"),
    ),
    KeySpec(f"{_STREAM}.key", None, "str", "Spark: the key column of an input."),
    KeySpec(f"{_STREAM}.value", None, "str", "Spark: the message column (unset: the row)."),
    KeySpec(f"{_STREAM}.timestamp", None, "str", "Spark: event-time column (epoch ms)."),
    KeySpec(
        f"{_STREAM}.partitions",
        None,
        "int>=1",
        "Spark: repartition an input by its key column into this many partitions (Kafka's key_partition).",
    ),
    KeySpec(
        f"{_STREAM}.schema",
        None,
        "str",
        "Spark: an output's columns as Spark DDL (a string, t decimal(10,2)); unset: first-seen types.",
    ),
    KeySpec(
        "systems.<system>.spark.output.dir",
        None,
        "str",
        "Spark: directory of output streams' parquet (default <job.shared.dir>/<job.name>-<job.id>/"
        "spark-output).",
    ),
    KeySpec(
        "systems.<system>.spark.output.target.file.rows",
        "1000000",
        "int>=0",
        "Spark: output files of fewer rows are merged (ten of a size class at once) when their stream's "
        "_spark_metadata log is compacted; 0: never merged.",
    ),
    KeySpec(
        "systems.<system>.spark.local.write.max.bytes",
        "16777216",
        "int>=0",
        "Spark: configured parquet inputs with spark.partitions of at most these source bytes are "
        "partitioned by key in the driver with pyarrow (no Spark job at launch); 0: always with Spark.",
    ),
    KeySpec(
        "job.shared.dir",
        None,
        "str",
        "Spark: a directory the driver and every executor reach at the same path (a shared mount; file:// "
        "URIs too) for written inputs and outputs; required under a cluster master (default: "
        "job.logged.store.base.dir, one machine).",
    ),
    KeySpec(
        "systems.<system>.spark.max.backlog",
        "100000",
        "int>=0",
        "Spark: unconsumed messages of a fed (streaming) input above which its foreachBatch waits.",
    ),
    KeySpec(
        "spark.master",
        None,
        "str",
        "Spark: master of a session samza_nb makes (default local[<task slots the job needs>,4]).",
    ),
    KeySpec(
        "spark.jvm.quick.start",
        "true",
        "bool",
        "Spark: the driver JVM of a session samza_nb makes compiles with C1 only and maps the class archive "
        "samza-nb spark-class-archive built (about 4 x less launch CPU), its executors' JVMs under a cluster "
        "master C1 only; false: the JVMs' defaults.",
    ),
    KeySpec(
        "spark.ship.code",
        "true",
        "bool",
        "Spark: under a cluster master, zip the module or package of task.class / app.class (when not "
        "installed) and ship it to the executors with addPyFile; false when the workers have it.",
    ),
    KeySpec(
        "spark.conf.<property>",
        None,
        "str",
        "Spark: a Spark conf of a session samza_nb makes (spark.conf.spark.sql.shuffle.partitions = 4).",
    ),
)
"""Keys of Spark systems' streams and outputs."""

__all__ = ["SPARK_KEYS"]
