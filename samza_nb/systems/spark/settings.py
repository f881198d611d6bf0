"""Where a Spark system's streams come from and where its files go: per-stream settings and directories.

A stream of a Spark system is a DataFrame registered in this process (:func:`register_dataframe`) or one
configured by path: ``systems.<s>.streams.<t>.spark.path``, ``.spark.format`` (default parquet),
``.spark.key``, ``.spark.value``, ``.spark.timestamp``, ``.spark.partitions``. A registration wins over
the config. Every file sits under the job's files directory ``<job.shared.dir>/<job.name>-<job.id>``
(``job.shared.dir`` defaults to ``job.logged.store.base.dir``: one machine), which the driver and every
executor see at the same path:

- ``<job files>/spark-input/<system>/<stream>/``: a bounded input, written once (``manifest.json`` and
  parquet);
- ``systems.<s>.spark.output.dir`` (default ``<job files>/spark-output``) ``/<stream>/``: an output's
  generations, each a directory of parquet and its ``_spark_metadata`` log, and ``_samza_commits/``
  beside the streams (the layout: :mod:`.outputs.generations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.config.catalogue import default_of
from samza_nb.config.key_spec import parse_bool, parse_int
from samza_nb.errors import ConfigError
from samza_nb.systems.spark.registry import RegisteredFrame, registered_frame

if TYPE_CHECKING:
    from samza_nb.config import Config

FORMATS: Final = ("parquet", "orc", "json", "csv", "text")
"""The ``spark.format`` values Spark reads without extra packages."""

BASE_DIR_KEY: Final = "job.logged.store.base.dir"
SHARED_DIR_KEY: Final = "job.shared.dir"
READ_ONLY_INPUTS_ENV: Final = "SAMZA_NB_READ_ONLY_INPUTS"
"""Set (to any value) in the environment of a container the Spark runner starts on an executor: that process
reads the inputs the driver wrote and never writes one (nor starts a Spark application to)."""


def stream_key(system: str, stream: str, name: str) -> str:
    """The config key ``systems.<system>.streams.<stream>.spark.<name>``."""
    return f"systems.{system}.streams.{stream}.spark.{name}"


def job_directory(config: Config) -> Path:
    """The job's directory: ``job.logged.store.base.dir``, absolute."""
    raw = (config.get_str(BASE_DIR_KEY) or "").strip() or (default_of(BASE_DIR_KEY) or ".")
    return Path(raw).expanduser().absolute()


def shared_directory(config: Config) -> Path:
    """``job.shared.dir`` (a path, or a ``file://`` URI), absolute; else the job's directory: what the
    driver and every executor reach at the same path."""
    raw = (config.get_str(SHARED_DIR_KEY) or "").strip()
    if not raw:
        return job_directory(config)
    if "://" in raw and not raw.startswith("file://"):
        raise ConfigError(
            f"{SHARED_DIR_KEY} = {raw!r}: only a directory the driver and the executors mount at the same "
            "path (or a file:// URI) is supported",
            key=SHARED_DIR_KEY,
        )
    return Path(raw.removeprefix("file://")).expanduser().absolute()


def shared_across_machines(config: Config) -> bool:
    """True when ``job.shared.dir`` is set: other machines write the job's shared files (a waiter for their
    writes polls, as inotify sees only this machine's)."""
    return bool((config.get_str(SHARED_DIR_KEY) or "").strip())


def job_files_directory(config: Config) -> Path:
    """``<job.shared.dir>/<job.name>-<job.id>``: the job's own directory of Spark files, so another job, or
    the same job under a new ``job.id``, never shares a written or fed input or an output."""
    return shared_directory(config) / job_key(config)


def job_key(config: Config) -> str:
    """``<job.name>-<job.id>``: what tells the job's files from another job's."""
    return f"{config.job_name()}-{config.job_id()}"


def input_directory(config: Config, system: str, stream: str) -> Path:
    """``<job files>/spark-input/<system>/<stream>``: where the bounded input ``stream`` is written once."""
    return job_files_directory(config) / "spark-input" / system / stream


def output_root(config: Config, system: str) -> Path:
    """``systems.<s>.spark.output.dir`` (default ``<job files>/spark-output``): the system's outputs, a
    directory per stream, and their commit records."""
    raw = (config.get_str(f"systems.{system}.spark.output.dir") or "").strip()
    return Path(raw).expanduser().absolute() if raw else job_files_directory(config) / "spark-output"


def output_directory(config: Config, system: str, stream: str) -> Path:
    """``<output root>/<stream>``: the generations of output ``stream`` (the current one's directory:
    :func:`.outputs.generations.current_output_directory`)."""
    return output_root(config, system) / stream


def reset_offset(config: Config, system: str, stream: str) -> bool:
    """``systems.<s>.streams.<t>.samza.reset.offset`` (default false)."""
    key = f"systems.{system}.streams.{stream}.samza.reset.offset"
    return parse_bool(key, config[key]) if key in config else False


@dataclass(frozen=True)
class StreamSettings:
    """How one stream's rows become messages, and where they come from: ``frame`` (a registered
    DataFrame, bounded or streaming), else ``path`` (configured files of ``format``), else neither (a
    process that only reads what the driver wrote). ``key`` / ``value`` / ``timestamp`` name columns;
    ``partitions`` N repartitions by the key column (None: the source's own partitioning)."""

    system: str
    stream: str
    frame: RegisteredFrame | None = None
    path: str | None = None
    format: str = "parquet"
    key: str | None = None
    value: str | None = None
    timestamp: str | None = None
    partitions: int | None = None

    @property
    def roles(self) -> dict[str, Any]:
        """The column roles and partition count, as the manifest records them."""
        return {
            "key": self.key,
            "value": self.value,
            "timestamp": self.timestamp,
            "partitions": self.partitions,
        }

    @property
    def has_source(self) -> bool:
        """True when this process can (re)write the input: a registration or a configured path."""
        return self.frame is not None or self.path is not None

    @property
    def needs_spark(self) -> bool:
        """False only for configured parquet without ``partitions`` (the files are read as they are)."""
        return self.frame is not None or self.format != "parquet" or self.partitions is not None

    @property
    def streaming(self) -> bool:
        """True for a registered streaming DataFrame (fed into the durable log, not written once)."""
        return self.frame is not None and self.frame.streaming

    def role_key(self, role: str) -> str:
        """What names column role ``role`` in errors: the config key, or the register_dataframe argument."""
        if self.frame is not None:
            return f"register_dataframe({self.stream!r}, {role}=...)"
        return stream_key(self.system, self.stream, role)

    def check_columns(self, columns: list[str], where: str) -> None:
        """A ConfigError naming the key of the first role whose column is not among ``columns`` (the
        columns of ``where``: a DataFrame, a file)."""
        for role, column in (("key", self.key), ("value", self.value), ("timestamp", self.timestamp)):
            if column is not None and column not in columns:
                raise ConfigError(
                    f"{self.role_key(role)} = {column!r} is not a column of {where} "
                    f"(columns: {', '.join(columns) or 'none'})",
                    key=self.role_key(role),
                )


def stream_settings(config: Config, system: str, stream: str) -> StreamSettings:
    """The settings of ``stream``: its registration in this process, else its config; a bad value is a
    ConfigError naming its key (``spark.format`` not one of :data:`FORMATS`, ``spark.partitions`` not an
    int >= 1 or without ``spark.key``, blank column names)."""
    frame = registered_frame(system, stream)
    if frame is not None:
        return StreamSettings(
            system, stream, frame, key=frame.key, value=frame.value, timestamp=frame.timestamp,
            partitions=frame.partitions,
        )  # fmt: skip
    path = _text(config, stream_key(system, stream, "path"))
    format_key = stream_key(system, stream, "format")
    fmt = (_text(config, format_key) or "parquet").lower()
    if fmt not in FORMATS:
        raise ConfigError(
            f"{format_key}={config[format_key]!r} is not valid: expected one of {', '.join(FORMATS)}",
            key=format_key,
        )
    partitions_key = stream_key(system, stream, "partitions")
    raw_partitions = _text(config, partitions_key)
    partitions = parse_int(partitions_key, raw_partitions, minimum=1) if raw_partitions is not None else None
    key = _text(config, stream_key(system, stream, "key"))
    if partitions is not None and key is None:
        raise ConfigError(
            f"{partitions_key}={partitions} repartitions by the key column: set "
            f"{stream_key(system, stream, 'key')}",
            key=partitions_key,
        )
    return StreamSettings(
        system, stream, None, path=path, format=fmt, key=key,
        value=_text(config, stream_key(system, stream, "value")),
        timestamp=_text(config, stream_key(system, stream, "timestamp")),
        partitions=partitions,
    )  # fmt: skip


def _text(config: Config, key: str) -> str | None:
    """``key``'s value stripped; None when unset; a ConfigError naming the key when set but blank."""
    if key not in config:
        return None
    value = config[key].strip()
    if not value:
        raise ConfigError(f"{key} is set but blank", key=key)
    return value


__all__ = [
    "FORMATS",
    "SHARED_DIR_KEY",
    "StreamSettings",
    "input_directory",
    "job_directory",
    "job_files_directory",
    "job_key",
    "output_directory",
    "output_root",
    "reset_offset",
    "shared_across_machines",
    "shared_directory",
    "stream_key",
    "stream_settings",
]
