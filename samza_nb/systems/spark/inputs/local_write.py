"""Partitioning a small configured parquet input in the driver, without a Spark job.

A configured parquet input with ``spark.partitions`` N is repartitioned by its key column; for an input of
a few megabytes, a Spark SQL job (a Python UDF for the partitioner, a shuffle, a sort, a partitioned
write) costs most of a Spark run's launch while the work itself is milliseconds. Up to
``systems.<system>.spark.local.write.max.bytes`` of source files (default :data:`DEFAULT_MAX_BYTES`; 0:
always Spark), the driver does the same with pyarrow: the partition of a row is the same
:class:`.keys.RowPartitioner` of its key the Spark job applies, rows are sorted by the timestamp column
within each partition (nulls first, as Spark sorts), and every partition with rows gets one file under
``data/<partition column>=<n>/`` (an empty partition has none), as Spark's write lays them out. Files
under Hive-style ``name=value`` directories are left to Spark (it adds those columns from the paths).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from samza_nb.config.key_spec import parse_int
from samza_nb.systems.spark.inputs.keys import RowPartitioner
from samza_nb.systems.spark.inputs.manifest import PartitionFiles

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.serde.base import Serde
    from samza_nb.systems.spark.settings import StreamSettings

DEFAULT_MAX_BYTES: Final = 16 * 2**20
"""Source files up to this many bytes are partitioned in the driver (see the module)."""


def local_write_key(system: str) -> str:
    """The key bounding the source bytes partitioned in the driver for ``system``."""
    return f"systems.{system}.spark.local.write.max.bytes"


def writes_locally(config: Config, settings: StreamSettings, files: list[Path]) -> bool:
    """True when the driver partitions this input itself: configured parquet with ``spark.partitions``,
    no Hive-style directory among its files' paths, at most the configured bytes in all."""
    if settings.frame is not None or settings.format != "parquet" or settings.partitions is None:
        return False
    if not files or any("=" in part for path in files for part in path.parent.parts):
        return False
    key = local_write_key(settings.system)
    raw = config.get_str(key)
    limit = DEFAULT_MAX_BYTES if raw is None else parse_int(key, raw, minimum=0)
    return sum(path.stat().st_size for path in files) <= limit


def partition_locally(
    settings: StreamSettings, serde: Serde | None, files: list[Path], data: Path, column: str
) -> list[PartitionFiles]:
    """Write ``files`` repartitioned by key into ``data/<column>=<n>/`` and return each partition's files
    (names relative to ``data``'s parent) and rows; a SamzaError naming the file that cannot be read."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from samza_nb.errors import SamzaError

    tables = []
    for path in files:
        try:
            tables.append(pq.read_table(path))
        except Exception as exc:
            raise SamzaError(f"cannot read parquet file {str(path)!r} of {settings.path!r}: {exc}") from None
    try:
        table = pa.concat_tables(tables, promote_options="default")
    except pa.ArrowInvalid as exc:
        raise SamzaError(f"the parquet files under {settings.path!r} do not share a schema: {exc}") from None
    settings.check_columns(list(table.column_names), f"parquet {settings.path!r}")
    assert settings.partitions is not None and settings.key is not None
    partition_of = RowPartitioner(settings.partitions, serde)
    partition = pa.array([partition_of(key) for key in table.column(settings.key).to_pylist()], pa.int32())
    written = []
    for n in range(settings.partitions):
        rows = table.filter(pc.equal(partition, n))
        if rows.num_rows == 0:
            written.append(PartitionFiles((), 0))
            continue
        if settings.timestamp is not None:  # nulls first, then by time (Spark's ascending order)
            at = rows.column(settings.timestamp)
            timed = rows.filter(pc.is_valid(at)).sort_by(settings.timestamp)
            rows = pa.concat_tables([rows.filter(pc.is_null(at)), timed])
        path = data / f"{column}={n}" / "part-00000.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(rows, path)
        written.append(PartitionFiles((str(path.relative_to(data.parent)),), rows.num_rows))
    return written


__all__ = ["DEFAULT_MAX_BYTES", "local_write_key", "partition_locally", "writes_locally"]
