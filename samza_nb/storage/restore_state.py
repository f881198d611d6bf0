"""``samza-nb run --restore-state``: move the job's unusable state files aside, so the stores restore from
their changelogs.

Each task partition's state file (``stores/partition-<n>.duckdb``) is opened and checked as the job
would, then a copy of it is used up: every block read (DuckDB checks their checksums). One that cannot be used
(truncated, not a DuckDB file, damaged: :class:`UnusableStateFileError`) is renamed, with DuckDB's
``.wal`` beside it, to ``<name>.unusable-<UTC time>`` in the same directory: kept for inspection, never
deleted. The job then finds no state file for that partition and restores every store of it from its
changelog (and resumes from the checkpoint), as on a new machine.

Refused, moving nothing: a store without a changelog (its state exists only in the file: delete the file
yourself to start it empty), and files that fail for other reasons (in use by a live process, another
job's): their errors say what to do.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb.job_files import job_identity, quote_ident, state_directory
from samza_nb.storage.duckdb.open_errors import (
    RESTORE_STATE_OPTION,
    UnusableStateFileError,
    companions,
    use_error,
)
from samza_nb.storage.duckdb.state_file import StateFile
from samza_nb.storage.settings import changelog_stream, configured_store_names

if TYPE_CHECKING:
    from samza_nb.config.config import Config


@dataclass(frozen=True)
class SetAside:
    """One unusable state file moved aside: where it was, where it is now, and why it was unusable."""

    path: Path
    moved_to: Path
    reason: str


def unusable_state_files(config: Config) -> list[UnusableStateFileError]:
    """The job's task partition state files that cannot be used, each with why: each is opened as the job
    would, then a copy of it is used up (see :func:`use_up_a_copy`). Other errors opening them (in use by
    a live process, another job's) are raised as they are."""
    directory = state_directory(config)
    if not directory.is_dir():
        return []
    job_name, job_id = job_identity(config)
    found: list[UnusableStateFileError] = []
    for path in sorted(directory.glob("partition-*.duckdb"), key=_partition_number):
        file = StateFile(path, job_name, job_id)
        try:
            file.open()
            file.close()
            use_up_a_copy(path)
        except UnusableStateFileError as exc:
            found.append(exc)
        finally:
            file.close()
    return found


def use_up_a_copy(path: Path) -> None:
    """:class:`UnusableStateFileError` (naming ``path``) when some block of the file is damaged or
    missing. DuckDB checks a block's checksum when it reads it, and reads index blocks only when keys are
    removed at a commit, so the check works on a copy (with its ``.wal``) in a scratch directory beside the
    file: every column of every table is read, then every row deleted and committed, then a checkpoint
    forced. The file itself is only read."""
    with tempfile.TemporaryDirectory(prefix=".check-", dir=path.parent) as scratch:
        copy = Path(scratch) / path.name
        for source in companions(path):
            shutil.copyfile(source, copy.with_name(source.name))
        try:
            conn = duckdb.connect(str(copy))
        except duckdb.Error as exc:
            raise use_error(str(path), exc, "opening a copy") from exc
        try:
            tables = conn.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
            ).fetchall()
            for (table,) in tables:
                name = quote_ident(str(table))
                conn.execute(f"SELECT max(hash(COLUMNS(*))) FROM {name}").fetchall()
                conn.execute("BEGIN TRANSACTION")
                conn.execute(f"DELETE FROM {name}")
                conn.execute("COMMIT")
            conn.execute("FORCE CHECKPOINT")
        except duckdb.Error as exc:
            raise use_error(str(path), exc, "reading a copy") from exc
        finally:
            with contextlib.suppress(duckdb.Error):
                conn.close()


def set_aside_unusable_state(config: Config) -> list[SetAside]:
    """Move the job's unusable state files aside (see the module doc); returns what was moved.

    A :class:`CheckpointError` naming the store and the file when a store has no changelog to restore it
    from (nothing is moved then)."""
    unusable = unusable_state_files(config)
    if not unusable:
        return []
    without = [name for name in configured_store_names(config) if changelog_stream(config, name) is None]
    if without:
        files = " and ".join(str(p) for exc in unusable for p in companions(exc.path))
        raise CheckpointError(
            f"{RESTORE_STATE_OPTION}: store {without[0]!r} has no changelog (stores.{without[0]}.changelog), "
            f"so its state cannot be restored; {unusable[0].path} cannot be used ({unusable[0].reason}). "
            f"Delete {files} yourself to start such stores empty"
        )
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    moved: list[SetAside] = []
    for exc in unusable:
        path = Path(exc.path)
        target = _free_name(path, stamp)
        for source in companions(path):
            source.rename(target.with_name(target.name.replace(path.name, source.name, 1)))
        moved.append(SetAside(path, target, exc.reason))
    return moved


def _free_name(path: Path, stamp: str) -> Path:
    """``<name>.unusable-<stamp>`` beside ``path`` (with ``-<n>`` when taken)."""
    candidate = path.with_name(f"{path.name}.unusable-{stamp}")
    number = 1
    while (
        candidate.exists()
        or candidate.with_name(candidate.name.replace(".duckdb", ".duckdb.wal", 1)).exists()
    ):
        number += 1
        candidate = path.with_name(f"{path.name}.unusable-{stamp}-{number}")
    return candidate


def _partition_number(path: Path) -> int:
    digits = path.name[len("partition-") : -len(".duckdb")]
    return int(digits) if digits.isdigit() else -1


__all__ = ["SetAside", "set_aside_unusable_state", "unusable_state_files", "use_up_a_copy"]
