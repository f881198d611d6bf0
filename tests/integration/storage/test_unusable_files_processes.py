"""A job database in use by a live process (a real second process) is one CheckpointError naming the file
and that process, and saying what to do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb.open_errors import UnusableStateFileError
from tests.unit.storage.test_unusable_files import open_file, state_file

pytestmark = pytest.mark.faults


def test_a_file_locked_by_a_live_process_names_that_process(tmp_path: Path) -> None:
    path = state_file(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        with pytest.raises(CheckpointError) as info:
            open_file(path)
        message = str(info.value)
        assert not isinstance(info.value, UnusableStateFileError)
        assert f"job database {path} is in use by process {holder.pid} (" in message
        assert f"stop process {holder.pid}" in message and "\n" not in message
    finally:
        holder.communicate("")
    open_file(path).close()  # usable again once that process ended


_HOLD = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('open', flush=True); sys.stdin.read()"
