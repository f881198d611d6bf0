"""A Spark system's outputs: parquet files per task per commit, and :func:`read_output` (DESIGN §10.3).

A task sending to ``SystemStream("<s>", "<t>")`` of a Spark system has its messages buffered (per task);
``flush(task)``, which the container calls before every checkpoint, writes them as one parquet file under
``systems.<s>.spark.output.dir`` (default ``<job.logged.store.base.dir>/spark-output``) ``/<t>/`` — to a
hidden temporary name, fsynced, then renamed into place — and nothing when nothing was sent. A crash after
the rename and before the checkpoint repeats those rows (at-least-once). File names sort by task, then in
commit order, and never collide across restarts: ``<task>.<ns since epoch>-<random>.parquet``.

Columns: ``key`` when any message of the file has a key; a dict message's fields (when every message is a
dict), else ``value``. A message pyarrow cannot store is a SystemProducerError naming stream and task.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.spark.manifest import fsync_directory
from samza_nb.systems.spark.settings import output_directory

if TYPE_CHECKING:
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.config import Config

_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def file_prefix(task: str) -> str:
    """``task`` made safe as the start of a file name Spark reads (no leading ``.`` or ``_``)."""
    safe = _UNSAFE.sub("_", task).lstrip("._")
    return safe or "task"


class _Buffer:
    """What one task sent to one stream since its last flush."""

    __slots__ = ("keys", "messages")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.messages: list[Any] = []


class SparkSinkProducer:
    """Writes what each task sends as parquet per task per commit (see the module); thread-safe sends."""

    def __init__(self, system: str, config: Config) -> None:
        self.system = system
        self.config = config
        self._buffers: dict[tuple[str, str], _Buffer] = {}
        self._lock = threading.Lock()
        self._last_stamp = 0

    async def start(self) -> None:
        """Nothing to connect."""

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Buffer ``envelope`` for ``source``'s next file of its stream."""
        key = (source, envelope.system_stream.stream)
        with self._lock:
            buffer = self._buffers.get(key)
            if buffer is None:
                buffer = self._buffers[key] = _Buffer()
            buffer.keys.append(envelope.key)
            buffer.messages.append(envelope.message)

    async def flush(self, source: str) -> None:
        """Write one file per stream ``source`` sent to since its last flush (nothing when nothing was)."""
        with self._lock:
            taken = [(stream, self._buffers.pop((task, stream)))
                     for task, stream in list(self._buffers) if task == source]  # fmt: skip
        for stream, buffer in taken:
            await asyncio.to_thread(self._write, source, stream, buffer)

    def _write(self, task: str, stream: str, buffer: _Buffer) -> Path:
        table = _table(task, self.system, stream, buffer)
        directory = output_directory(self.config, self.system, stream)
        name = f"{file_prefix(task)}.{self._stamp():020d}-{secrets.token_hex(4)}.parquet"
        path = directory / name
        temporary = directory / f".{name}.tmp"
        try:
            import pyarrow.parquet as pq

            directory.mkdir(parents=True, exist_ok=True)
            with temporary.open("wb") as file:
                pq.write_table(table, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
            fsync_directory(directory)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise SystemProducerError(
                f"cannot write {self.system}.{stream} output of task {task!r} to {str(path)!r}: {exc}"
            ) from None
        return path

    def _stamp(self) -> int:
        """Nanoseconds since the epoch, strictly increasing in this producer (commit order)."""
        with self._lock:
            self._last_stamp = max(time.time_ns(), self._last_stamp + 1)
            return self._last_stamp

    async def stop(self) -> None:
        """Write what every task sent since its last flush."""
        with self._lock:
            sources = sorted({task for task, _ in self._buffers})
        for source in sources:
            await self.flush(source)


def _table(task: str, system: str, stream: str, buffer: _Buffer) -> Any:
    """The messages of ``buffer`` as a pyarrow table (see the module for the columns)."""
    import pyarrow as pa

    messages = buffer.messages
    columns: dict[str, Any] = {}
    try:
        if any(key is not None for key in buffer.keys):
            columns["key"] = pa.array(buffer.keys)
        if messages and all(isinstance(message, dict) for message in messages):
            fields = pa.Table.from_pylist(messages)
            if "key" in columns and "key" in fields.column_names:
                raise SystemProducerError(
                    f"{system}.{stream} output of task {task!r}: messages with keys cannot have a field 'key'"
                )
            for name in fields.column_names:
                columns[name] = fields.column(name)
        else:
            columns["value"] = pa.array(messages)
        return pa.table(columns)
    except SamzaError:
        raise
    except Exception as exc:
        raise SystemProducerError(
            f"{system}.{stream} output of task {task!r} cannot be stored as parquet: {exc}"
        ) from None


def read_output(spark: Any, stream: str, config: Config, *, system: str = "spark") -> Any:
    """The messages the job wrote to ``SystemStream(system, stream)``, as a DataFrame of ``spark`` (schemas
    of the files merged); a SamzaError naming the directory when it holds no file yet."""
    directory = output_directory(config, system, stream)
    if not directory.is_dir() or not any(path.suffix == ".parquet" and not path.name.startswith((".", "_"))
                                         for path in directory.iterdir()):  # fmt: skip
        raise SamzaError(f"Spark output {system}.{stream} has no files yet in {directory}")
    return spark.read.option("mergeSchema", "true").parquet(str(directory))


__all__ = ["SparkSinkProducer", "file_prefix", "read_output"]
