"""Files the job writes are never world-writable, whatever the umask (DuckDB creates its files 0o666)."""

from __future__ import annotations

import os
import stat


def drop_world_write(path: str) -> None:
    """Clear the others-write bit of ``path`` when it is set (no-op for a missing file or one not ours)."""
    try:
        mode = os.stat(path).st_mode
        if mode & stat.S_IWOTH:
            os.chmod(path, stat.S_IMODE(mode) & ~stat.S_IWOTH)
    except OSError:
        pass  # not ours to change (or gone): opening it is what reports problems


__all__ = ["drop_world_write"]
