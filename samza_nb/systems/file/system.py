"""The file system: text files as streams, one message per line. For examples, scripts and small jobs.

``systems.<name>.samza.factory = samza_nb.systems.file.FileSystemFactory``. A stream is one file with one
partition, ``systems.<name>.streams.<stream>.path = <file>`` (relative paths are relative to the working
directory).

Reading: the message is the line (UTF-8) without its line ending, the key is None, offsets are line numbers
"0", "1", … . An input file is bounded: after its last line comes end-of-stream. Lines are read lazily, at
most :data:`POLL_BATCH` per partition and poll, so a large file is never held in memory at once.

Writing: a message becomes one line, the str itself or ``json.dumps(message)`` for anything else, appended
to the stream's file (``path`` when configured, else ``<systems.<name>.output.dir>/<stream>.txt`` with
``output.dir`` defaulting to ``./output``). Writes are buffered and reach the disk (flushed and fsynced) on
``flush``, which the container calls before every checkpoint.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Final

from samza_nb.api.metadata import OffsetReset, SSPMetadata
from samza_nb.api.streams import (
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStreamPartition,
)
from samza_nb.errors import ConfigError, SamzaError, SystemConsumersError, SystemProducerError
from samza_nb.systems.offsets import (
    compare_integer_offsets,
    integer_offset_after,
    parse_integer_offset,
    reset_past_end,
)

if TYPE_CHECKING:
    from samza_nb.config import Config

POLL_BATCH: Final[int] = 10_000
"""Most lines one poll returns per partition."""

DEFAULT_OUTPUT_DIR: Final[str] = "./output"
"""Directory of output streams without a configured path (``systems.<name>.output.dir``)."""

_CHUNK = 1 << 20


def path_key(system: str, stream: str) -> str:
    """The config key holding the file of ``stream``."""
    return f"systems.{system}.streams.{stream}.path"


def input_path(config: Config, system: str, stream: str) -> Path:
    """The configured file of an input stream; a ConfigError naming the key when it is not set."""
    key = path_key(system, stream)
    raw = config.get_str(key)
    if raw is None or not raw.strip():
        raise ConfigError(
            f"missing required config {key}: the file that stream {system}.{stream} reads", key=key
        )
    return Path(raw.strip()).expanduser()


def output_path(config: Config, system: str, stream: str) -> Path:
    """The file an output stream appends to: its configured path, else ``<output.dir>/<stream>.txt``."""
    raw = config.get_str(path_key(system, stream))
    if raw is not None and raw.strip():
        return Path(raw.strip()).expanduser()
    directory = config.get_str(f"systems.{system}.output.dir", DEFAULT_OUTPUT_DIR).strip() or "."
    return Path(directory).expanduser() / f"{stream}.txt"


def count_lines(path: Path) -> int:
    """Lines in ``path`` (a last line without a line ending counts); a SamzaError naming a missing file."""
    count = 0
    last = b"\n"
    try:
        with path.open("rb") as file:
            while chunk := file.read(_CHUNK):
                count += chunk.count(b"\n")
                last = chunk[-1:]
    except FileNotFoundError:
        raise SamzaError(f"input file {str(path)!r} does not exist") from None
    except OSError as exc:
        raise SamzaError(f"cannot read input file {str(path)!r}: {exc}") from None
    return count + (last != b"\n")


FILE_OFFSET = "a file offset (expected a line number 0, 1, ...)"
"""What an offset of this system is, for errors about one."""


class FileSystemAdmin:
    """Metadata from line counts; integer offset order; ``create_stream`` creates an empty file."""

    def __init__(self, system: str, config: Config) -> None:
        self._system = system
        self._config = config

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """oldest/newest/upcoming of each stream's one partition, from its file's line count."""
        result: dict[str, dict[int, SSPMetadata]] = {}
        for stream in streams:
            path = input_path(self._config, self._system, stream)
            lines = await asyncio.to_thread(count_lines, path)
            if lines:
                result[stream] = {0: SSPMetadata("0", str(lines - 1), str(lines))}
            else:
                result[stream] = {0: SSPMetadata(None, None, "0")}
        return result

    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order of line numbers ("2" < "10"); end-of-stream sorts last."""
        return compare_integer_offsets(a, b)

    def offset_after(self, offset: str) -> str:
        """The next line number."""
        return integer_offset_after(f"system {self._system!r}", offset, FILE_OFFSET)

    async def create_stream(self, stream: str, partitions: int) -> None:
        """Create the stream's file (empty) if it does not exist; a file has exactly one partition."""
        if partitions != 1:
            raise SamzaError(
                f"file system {self._system!r}: stream {stream!r} is one file with one partition, "
                f"not {partitions}"
            )
        path = output_path(self._config, self._system, stream)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch(exist_ok=True)
        except OSError as exc:
            raise SamzaError(f"cannot create stream file {str(path)!r}: {exc}") from None


class _Reader:
    """One registered partition: its file, the next line number, whether end-of-stream was returned; the
    config (for the reset policy of a file shorter than its checkpoint) and where resets are reported."""

    __slots__ = ("config", "ended", "file", "next_line", "path", "resets", "ssp", "start")

    def __init__(
        self, ssp: SystemStreamPartition, path: Path, start: int, config: Config, resets: list[OffsetReset]
    ) -> None:
        self.ssp = ssp
        self.path = path
        self.start = start
        self.config = config
        self.resets = resets
        self.next_line = 0
        self.file: IO[bytes] | None = None
        self.ended = False

    def open(self) -> None:
        try:
            self.file = self.path.open("rb")
        except FileNotFoundError:
            raise SamzaError(f"input file {str(self.path)!r} of {self.ssp} does not exist") from None
        except OSError as exc:
            raise SamzaError(f"cannot open input file {str(self.path)!r} of {self.ssp}: {exc}") from None

    def read(self, limit: int) -> list[IncomingMessageEnvelope]:
        """Up to ``limit`` envelopes from the next line on, plus end-of-stream after the last line."""
        file = self.file
        if file is None or self.ended:
            return []
        while self.next_line < self.start:  # skip what the job already processed
            if not file.readline():
                self._past_end(file)
                break
            self.next_line += 1
        batch: list[IncomingMessageEnvelope] = []
        ssp, path = self.ssp, self.path
        number = self.next_line
        readline = file.readline
        while len(batch) < limit:
            raw = readline()
            if not raw:
                batch.append(IncomingMessageEnvelope.end_of_stream(ssp))
                self.ended = True
                break
            if raw.endswith(b"\n"):
                raw = raw[:-2] if raw.endswith(b"\r\n") else raw[:-1]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise SamzaError(f"{str(path)!r} line {number + 1} is not valid UTF-8: {exc}") from None
            batch.append(IncomingMessageEnvelope(ssp, str(number), None, text))
            number += 1
        self.next_line = number
        return batch

    def _past_end(self, file: IO[bytes]) -> None:
        """The file has fewer lines than the start (it was replaced by a shorter one): move per the reset
        policy (:func:`reset_past_end`) and report it, or raise."""
        reset = reset_past_end(self.config, self.ssp, self.start, self.next_line, "the file")
        self.start = int(reset.to_offset)
        if self.start < self.next_line:
            file.seek(0)
            self.next_line = 0
            while self.next_line < self.start and file.readline():
                self.next_line += 1
        self.resets.append(reset)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class FileSystemConsumer:
    """Reads registered files line by line, :data:`POLL_BATCH` lines per partition and poll at most. A file
    with fewer lines than its starting offset (replaced by a shorter one since the checkpoint) is read
    per ``samza.offset.default`` when set and reported (:meth:`take_resets`), else refused."""

    def __init__(self, system: str, config: Config, batch_size: int = POLL_BATCH) -> None:
        self._system = system
        self._config = config
        self._batch_size = batch_size
        self._readers: dict[SystemStreamPartition, _Reader] = {}
        self._resets: list[OffsetReset] = []
        self._lock = threading.Lock()  # reads run on a worker thread; stop() closes under the lock

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from line number ``offset``."""
        if ssp.partition != 0:
            raise SystemConsumersError(f"{ssp}: a file stream has only partition 0")
        path = input_path(self._config, ssp.system, ssp.stream)
        start = parse_integer_offset(ssp, offset, FILE_OFFSET)
        self._readers[ssp] = _Reader(ssp, path, start, self._config, self._resets)

    async def start(self) -> None:
        """Open every registered file; a missing file is a SamzaError naming its path."""
        for reader in self._readers.values():
            reader.open()

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The next lines of each of ``ssps`` (end-of-stream after the last). Partitions that already
        returned end-of-stream have nothing more; when that is all that was asked for, waits ``timeout``."""
        readers = []
        for ssp in ssps:
            reader = self._readers.get(ssp)
            if reader is None:
                raise SystemConsumersError(f"{ssp} was never registered with this consumer")
            if not reader.ended:
                readers.append(reader)
        if not readers:
            if timeout > 0:
                await asyncio.sleep(timeout)
            return {}
        return await asyncio.to_thread(self._read, readers)

    def _read(self, readers: list[_Reader]) -> dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        with self._lock:
            for reader in readers:
                batch = reader.read(self._batch_size)
                if batch:
                    result[reader.ssp] = batch
        return result

    def take_resets(self) -> Sequence[OffsetReset]:
        """The partitions moved since the last call because their file is shorter than their start."""
        if not self._resets:
            return ()
        with self._lock:
            taken = self._resets[:]
            self._resets.clear()
        return taken

    async def stop(self) -> None:
        """Close the files."""
        with self._lock:
            for reader in self._readers.values():
                reader.close()


class FileSystemProducer:
    """Appends one line per message to the stream's file; ``send`` is safe from any thread."""

    def __init__(self, system: str, config: Config) -> None:
        self._system = system
        self._config = config
        self._files: dict[str, IO[str]] = {}
        self._lock = threading.Lock()
        self._closed = False

    async def start(self) -> None:
        """Nothing to connect; files open on their first message."""

    def _file(self, stream: str) -> IO[str]:
        file = self._files.get(stream)
        if file is None:
            path = output_path(self._config, self._system, stream)
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                file = path.open("a", encoding="utf-8", newline="\n", buffering=_CHUNK)
            except OSError as exc:
                raise SystemProducerError(
                    f"cannot open {str(path)!r} for stream {self._system}.{stream}: {exc}"
                ) from None
            self._files[stream] = file
        return file

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Buffer ``envelope``'s message as one line of its stream's file."""
        stream = envelope.system_stream.stream
        line = _to_line(envelope.message, f"{self._system}.{stream}")
        with self._lock:
            if self._closed:
                raise SystemProducerError(f"producer of file system {self._system!r} is stopped")
            self._file(stream).write(line)

    async def flush(self, source: str) -> None:
        """Write every buffered line to disk (flush and fsync)."""
        await asyncio.to_thread(self._flush)

    def _flush(self) -> None:
        with self._lock:
            for stream, file in self._files.items():
                try:
                    file.flush()
                    os.fsync(file.fileno())
                except OSError as exc:
                    raise SystemProducerError(
                        f"writing stream {self._system}.{stream} to {file.name!r} failed: {exc}"
                    ) from None

    async def stop(self) -> None:
        """Flush and close the files."""
        try:
            await self.flush("")
        finally:
            with self._lock:
                self._closed = True
                files, self._files = self._files, {}
            for file in files.values():
                file.close()


def _to_line(message: Any, stream: str) -> str:
    if isinstance(message, bytes):
        try:
            message = message.decode("utf-8")
        except UnicodeDecodeError:
            raise SystemProducerError(f"stream {stream}: a bytes message must be UTF-8 text") from None
    if isinstance(message, str):
        text = message
    else:
        try:
            text = json.dumps(message)
        except (TypeError, ValueError) as exc:
            raise SystemProducerError(
                f"stream {stream}: cannot write {type(message).__name__} message as JSON: {exc}"
            ) from None
    if "\n" in text or "\r" in text:
        raise SystemProducerError(
            f"stream {stream}: a str message cannot contain a line break (one message per line); "
            "send a dict or list to have it JSON-encoded"
        )
    return text + "\n"


class FileSystemFactory:
    """``systems.<name>.samza.factory = samza_nb.systems.file.FileSystemFactory``."""

    def get_admin(self, system_name: str, config: Config) -> FileSystemAdmin:
        """The admin of ``system_name``."""
        return FileSystemAdmin(system_name, config)

    def get_consumer(self, system_name: str, config: Config) -> FileSystemConsumer:
        """A consumer of ``system_name``."""
        return FileSystemConsumer(system_name, config)

    def get_producer(self, system_name: str, config: Config) -> FileSystemProducer:
        """A producer of ``system_name``."""
        return FileSystemProducer(system_name, config)


__all__ = [
    "DEFAULT_OUTPUT_DIR",
    "POLL_BATCH",
    "FileSystemAdmin",
    "FileSystemConsumer",
    "FileSystemFactory",
    "FileSystemProducer",
    "count_lines",
    "input_path",
    "output_path",
]
