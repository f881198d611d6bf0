"""``samza-nb run --restore-state``: move the job's unusable state files aside, so the stores restore from
their changelogs.

Each task partition's state file (``stores/partition-<n>.duckdb``) is opened and checked as the job would;
one that cannot be used (truncated, not a DuckDB file, damaged: :class:`UnusableStateFileError`) is
renamed, with DuckDB's ``.wal`` beside it, to ``<name>.unusable-<UTC time>`` in the same directory: kept
for inspection, never deleted. The job then finds no state file for that partition and restores every
store of it from its changelog (and resumes from the checkpoint), as on a new machine.

Refused, moving nothing: a store without a changelog (its state exists only in the file: delete the file
yourself to start it empty), and files that fail for other reasons (in use by a live process, another
job's): their errors say what to do.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from samza_nb.errors import CheckpointError
from samza_nb.storage.job_files import job_identity, state_directory
from samza_nb.storage.open_errors import RESTORE_STATE_OPTION, UnusableStateFileError, companions
from samza_nb.storage.settings import changelog_stream, configured_store_names
from samza_nb.storage.state_file import StateFile

if TYPE_CHECKING:
    from samza_nb.config.config import Config


@dataclass(frozen=True)
class SetAside:
    """One unusable state file moved aside: where it was, where it is now, and why it was unusable."""

    path: Path
    moved_to: Path
    reason: str


def unusable_state_files(config: Config) -> list[UnusableStateFileError]:
    """The job's task partition state files that cannot be used, each with why (opens and closes every
    one). Other errors opening them (in use, another job's) are raised as they are."""
    directory = state_directory(config)
    if not directory.is_dir():
        return []
    job_name, job_id = job_identity(config)
    found: list[UnusableStateFileError] = []
    for path in sorted(directory.glob("partition-*.duckdb"), key=_partition_number):
        file = StateFile(path, job_name, job_id)
        try:
            file.open()
        except UnusableStateFileError as exc:
            found.append(exc)
        finally:
            file.close()
    return found


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


__all__ = ["SetAside", "set_aside_unusable_state", "unusable_state_files"]
