"""The manifest of a written bounded input:
``<base>/<job.name>-<job.id>/spark-input/<system>/<stream>/manifest.json``.

It records the input's fingerprint, the column roles (key, value, timestamp, partitions) and, per
partition, its parquet files (in row order; relative to the directory when Spark wrote them there,
absolute for configured files read in place) and row count. The ``read`` marker beside it says a consumer
started reading this input (a changed DataFrame then needs ``reset.offset``: its checkpointed offsets are
row indexes of the old rows).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from samza_nb.api.metadata import SSPMetadata
from samza_nb.errors import SamzaError

MANIFEST: Final = "manifest.json"
READ_MARKER: Final = "read"
VERSION: Final = 1


@dataclass(frozen=True)
class PartitionFiles:
    """One partition: its files in row order and its row count."""

    files: tuple[str, ...]
    rows: int


@dataclass(frozen=True)
class Manifest:
    """A written bounded input (see the module): what :func:`read_manifest` returns."""

    directory: Path
    stream: str
    fingerprint: str
    roles: dict[str, Any]
    partitions: tuple[PartitionFiles, ...]

    @property
    def key(self) -> str | None:
        """The key column, if any."""
        value: str | None = self.roles.get("key")
        return value

    @property
    def value(self) -> str | None:
        """The value column, if any (None: the message is the row as a dict)."""
        value: str | None = self.roles.get("value")
        return value

    @property
    def timestamp(self) -> str | None:
        """The timestamp column, if any."""
        value: str | None = self.roles.get("timestamp")
        return value

    def metadata(self) -> dict[int, SSPMetadata]:
        """Per partition: oldest "0", newest str(n-1), upcoming str(n); an empty one None, None, "0"."""
        return {
            number: SSPMetadata("0", str(part.rows - 1), str(part.rows))
            if part.rows
            else SSPMetadata(None, None, "0")
            for number, part in enumerate(self.partitions)
        }

    def files(self, partition: int) -> list[Path]:
        """The files of ``partition`` (absolute paths), in row order."""
        return [self.directory / name for name in self.partitions[partition].files]

    def to_json(self) -> dict[str, Any]:
        """The manifest as ``manifest.json`` holds it."""
        return {
            "version": VERSION,
            "stream": self.stream,
            "fingerprint": self.fingerprint,
            "roles": self.roles,
            "partitions": [{"files": list(p.files), "rows": p.rows} for p in self.partitions],
        }


def read_manifest(directory: Path) -> Manifest | None:
    """The manifest in ``directory``; None when there is none; a SamzaError naming the file when it
    cannot be read or is not a manifest."""
    path = directory / MANIFEST
    data = read_json_file(path, "Spark input manifest")
    if data is None:
        return None
    try:
        if data["version"] != VERSION:
            raise SamzaError(f"Spark input manifest {str(path)!r} has version {data['version']!r}")
        partitions = tuple(
            PartitionFiles(tuple(str(name) for name in p["files"]), int(p["rows"]))
            for p in data["partitions"]
        )
        return Manifest(
            directory, str(data["stream"]), str(data["fingerprint"]), dict(data["roles"]), partitions
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise SamzaError(f"Spark input manifest {str(path)!r} is malformed: {exc!r}") from None


def read_json_file(path: Path, what: str) -> Any:
    """The JSON in ``path``; None when there is no such file; a SamzaError naming ``what`` and the file when
    it cannot be read or parsed."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SamzaError(f"cannot read {what} {str(path)!r}: {exc}") from None


def not_written(system: str, stream: str, directory: Path) -> SamzaError:
    """The error of a process that has no manifest of ``stream`` and cannot write one."""
    return SamzaError(
        f"Spark stream {system}.{stream} has not been written to {directory}: register the DataFrame "
        f"(register_dataframe({stream!r}, df, system={system!r})) in the driver before the job starts, "
        f"or configure systems.{system}.streams.{stream}.spark.path"
    )


def write_manifest(manifest: Manifest) -> None:
    """Write ``manifest.json`` into its directory (:func:`write_json_durably`)."""
    write_json_durably(manifest.directory / MANIFEST, manifest.to_json())


def write_json_durably(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path``: a hidden temporary file beside it, fsynced, renamed into place,
    the directory fsynced (created first when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("w", encoding="utf-8") as file:
        json.dump(data, file, indent=1, sort_keys=True)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    fsync_directory(path.parent)


def fsync_directory(directory: Path) -> None:
    """Make the names in ``directory`` durable (a rename into it)."""
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def mark_read(directory: Path) -> None:
    """Touch the ``read`` marker: a consumer started reading this input."""
    (directory / READ_MARKER).touch(exist_ok=True)


def was_read(directory: Path) -> bool:
    """True when a consumer started reading this input."""
    return (directory / READ_MARKER).exists()


__all__ = [
    "MANIFEST",
    "READ_MARKER",
    "Manifest",
    "PartitionFiles",
    "fsync_directory",
    "mark_read",
    "not_written",
    "read_json_file",
    "read_manifest",
    "was_read",
    "write_json_durably",
    "write_manifest",
]
