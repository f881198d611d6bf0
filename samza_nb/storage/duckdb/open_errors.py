"""Why one of the job's DuckDB files cannot be used, said in one line that says what to do about it.

Three ways a file fails to open after a crash or a mistake, each with its own remedy:

- **unusable** (truncated, not a DuckDB file, damaged blocks): :class:`UnusableStateFileError`. A task
  partition's state file (``stores/partition-<n>.duckdb``) can be rebuilt from the stores' changelogs: the
  message names ``samza-nb run --restore-state`` (which moves it aside) and the exact file to delete. The
  checkpoint file (``samza.duckdb``) has no changelog: the message names the file to delete and what the
  job then resumes from.
- **locked** by a live process: the message names that process (DuckDB's PID) and says to stop it; moving
  the file of a running job aside would not help, so ``--restore-state`` leaves it alone.
- anything else: the DuckDB error, naming the file.

A truncated file that DuckDB still opens (the cut fell in blocks read later) is found by
:func:`check_complete` when the file is too short for the blocks its header counts as used, or else when
a damaged block is first read (the samza_nb marker, on open).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Final

from samza_nb.errors import CheckpointError

if TYPE_CHECKING:
    import duckdb  # (imported where a file is checked: asking for this module's names needs no DuckDB)

DATABASE_HEADER_BYTES: Final = 3 * 4096
"""DuckDB's file header (one main header, two database headers) before the first block."""

RESTORE_STATE_OPTION: Final = "--restore-state"
"""The ``samza-nb run`` option that moves unusable state files aside (see
:mod:`samza_nb.storage.restore_state`)."""

_PID = re.compile(r"held in (.*?) \(PID (\d+)\)")


class UnusableStateFileError(CheckpointError):
    """The job database at ``path`` cannot be read (truncated, not DuckDB, damaged); ``reason`` says how.
    The file is left as it is. ``state_file``: it is a task partition's state file (restorable from the
    stores' changelogs), not the checkpoint file."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        self.state_file = is_state_file(path)
        super().__init__(f"job database {path} cannot be used: {reason}. {remedy(path)}")


def is_state_file(path: str | os.PathLike[str]) -> bool:
    """True for a task partition's state file, ``.../stores/partition-<n>.duckdb``."""
    file = Path(path)
    return file.parent.name == "stores" and re.fullmatch(r"partition-\d+\.duckdb", file.name) is not None


def companions(path: str | os.PathLike[str]) -> list[Path]:
    """The file and DuckDB's write-ahead log beside it (``<file>.wal``), those that exist."""
    file = Path(path)
    return [p for p in (file, file.with_name(file.name + ".wal")) if p.exists()]


def remedy(path: str) -> str:
    """What to do about the unusable file at ``path`` (one sentence, naming the exact files)."""
    files = " and ".join(str(p) for p in companions(path)) or path
    if is_state_file(path):
        return (
            f"Its stores are restored from their changelogs when it is gone: run again with "
            f"`samza-nb run {RESTORE_STATE_OPTION}` (moves it aside), or delete {files} "
            "(a store without a changelog then starts empty)"
        )
    return (
        f"Delete {files} (or move it away) to start without these checkpoints: each task then resumes from "
        "its state file's offsets, or else from samza.offset.default"
    )


def open_error(path: str, exc: duckdb.Error) -> CheckpointError:
    """The error for DuckDB's ``exc`` opening (or first reading) the file at ``path``: one line naming the
    file and saying what to do."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if "different configuration" in lowered:
        # DuckDB shares one database instance per file within a process, so a read-only open of a file this
        # process has open for writing is refused; the writer's connection can read it.
        return CheckpointError(
            f"job database {path} is open for writing in this process (a running job?): read it through "
            f"that connection instead (query_store_on with the job's DuckDB connection): {text}"
        )
    if "unique file handle conflict" in lowered:
        # DuckDB lets one database instance of a process attach a file (the job's open ones are attached to
        # pooled instances): it is open in this process already.
        return CheckpointError(
            f"job database {path} is already open in this process (a running job?): read it through that "
            f"job's connection instead (query_store_on with the job's DuckDB connection): {text}"
        )
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        holder = _PID.search(text)
        return in_use_error(path, (holder.group(2), holder.group(1)) if holder else None)
    return damage(path, exc) or CheckpointError(f"job database {path} could not be opened: {text}")


def in_use_error(path: str, holder: tuple[str, str] | None = None) -> CheckpointError:
    """The error for the file at ``path`` being written by another process: ``holder`` is its ``(PID,
    program)`` when known. One process writes a job's files (DuckDB's file lock; before the checkpoint file
    exists, the claim on its directory: :mod:`.claim`)."""
    who = f"process {holder[0]} ({holder[1]})" if holder else "another process"
    stop = f"stop process {holder[0]}" if holder else "stop it"
    return CheckpointError(
        f"job database {path} is in use by {who}: DuckDB lets one process write a file. Is the same "
        f"job already running? Wait for it or {stop}, or run this one with another job.id"
    )


def damage(path: str, exc: duckdb.Error) -> UnusableStateFileError | None:
    """The :class:`UnusableStateFileError` when DuckDB's ``exc`` (from any use of the file at ``path``)
    says the file is truncated, damaged or not DuckDB; None for any other error."""
    text = " ".join(str(exc).split())
    lowered = text.lower()
    if "not a valid duckdb database" in lowered:
        return UnusableStateFileError(
            path, "it is not a DuckDB database (empty, corrupt or a different kind of file)"
        )
    if "could not read enough bytes" in lowered:
        return UnusableStateFileError(path, f"it is truncated ({text})")
    if "corrupt database file" in lowered or "does not match stored checksum" in lowered:
        return UnusableStateFileError(path, f"it is damaged ({text})")
    return None


def use_error(path: str, exc: duckdb.Error, doing: str) -> CheckpointError:
    """The error for DuckDB's ``exc`` while ``doing`` something with the open file at ``path``: an
    :class:`UnusableStateFileError` (saying what to do) when the file turned out damaged, else a
    CheckpointError naming the file and what failed."""
    return damage(path, exc) or CheckpointError(f"job database {path}: {doing} failed: {exc}")


def check_complete(conn: duckdb.DuckDBPyConnection, path: str) -> None:
    """:class:`UnusableStateFileError` when the file behind ``conn`` is too short to hold the blocks its
    header counts as used (truncated where DuckDB reads only later; free blocks at the end may be cut off
    legitimately, so only used ones count); any DuckDB error reading it is classified as by
    :func:`open_error`."""
    import duckdb

    try:
        row = conn.execute(
            "SELECT block_size, used_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchone()
        size = os.stat(path).st_size
    except duckdb.Error as exc:
        raise open_error(path, exc) from exc
    except OSError as exc:
        raise CheckpointError(f"job database {path} could not be opened: {exc}") from exc
    if row is None:
        return
    block_size, used_blocks = int(row[0]), int(row[1])
    needed = DATABASE_HEADER_BYTES + block_size * used_blocks if used_blocks else 0
    if size < needed:
        raise UnusableStateFileError(
            path, f"it is truncated ({size} bytes, but its {used_blocks} used blocks need {needed})"
        )


__all__ = [
    "RESTORE_STATE_OPTION",
    "UnusableStateFileError",
    "check_complete",
    "companions",
    "damage",
    "in_use_error",
    "is_state_file",
    "open_error",
    "remedy",
    "use_error",
]
