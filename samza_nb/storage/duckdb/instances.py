"""DuckDB database instances for the job's files, kept for reuse within the process.

Creating a DuckDB instance costs ~13 ms (it builds its catalogue of built-in functions), more than opening
and closing a small file on one that exists (~1 ms). So :func:`attach` opens a file for writing on an idle
instance of this process's pool: the file is ``ATTACH``ed and made the instance's default database, so the
connection returned, and every ``.cursor()`` of it, works on the file as one of ``duckdb.connect(path)``
would. :func:`detach` closes it: the file is detached (DuckDB checkpoints it then, as when an instance
closes, and releases its lock) and the instance goes back to the pool with an in-memory placeholder as its
default database.

One file per instance at a time. A cursor's default database is fixed when the cursor is made, so a cursor
left over from a closed file fails loudly ("the default database ... has been detached") and never
reaches the instance's next file. DuckDB refuses to attach a file that any instance of the process has
attached ("Unique file handle conflict"), as it refuses a second process (the file lock). A connection
garbage-collected without :func:`detach` closes its instance, which releases the file as closing a
connection of its own would (a plain ``.close()`` of the connection leaves the file attached until then).

What is done through a connection can outlive it on its instance: functions registered with
``create_function``, ``SET GLOBAL`` settings, other attached databases. samza_nb's own code does none of
that; a connection handed to other code is marked with :func:`keep_private`, and its instance is closed
with the file instead of being reused. A forked child never takes its parent's instances from the pool.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import weakref
from typing import Any, Final

import duckdb

MAX_IDLE_INSTANCES: Final = 4
"""The most idle instances the pool keeps (each holds a few MB and DuckDB's worker threads)."""


class _Instance:
    """A DuckDB instance of the pool and the name of its current default database."""

    __slots__ = ("base", "default")

    def __init__(self) -> None:
        self.base = duckdb.connect(":memory:")
        self.default = "memory"

    def close(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self.base.close()


class _Attachment:
    """An open file: its instance, its alias there, the finalizer of its connection, and whether other
    code was given the connection (then the instance is closed with the file)."""

    __slots__ = ("alias", "finalizer", "instance", "private")

    def __init__(self, instance: _Instance, alias: str, finalizer: weakref.finalize[..., Any]) -> None:
        self.instance = instance
        self.alias = alias
        self.finalizer = finalizer
        self.private = False


_lock = threading.Lock()
_idle: list[_Instance] = []
_names = itertools.count()
_open: dict[int, _Attachment] = {}  # id(connection) -> its file's attachment
_inherited: list[object] = []  # a forked child's copies of its parent's instances, kept out of the pool


def _quote_path(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def attach(path: str) -> duckdb.DuckDBPyConnection:
    """A connection to the DuckDB file at ``path`` (created when absent), open for writing, on a pooled
    instance whose default database it is. DuckDB's error propagates as it is (the instance stays usable
    and goes back to the pool)."""
    with _lock:
        instance = _idle.pop() if _idle else None
    if instance is None:
        instance = _Instance()
    alias = f"samza_nb_file_{next(_names)}"
    base = instance.base
    try:
        base.execute(f"ATTACH {_quote_path(path)} AS {alias}")
    except BaseException:
        _give_back(instance)
        raise
    try:
        base.execute(f"USE {alias}")
        base.execute(f"DETACH {instance.default}")
        instance.default = alias
        conn = base.cursor()
    except BaseException:
        instance.close()  # closing the instance detaches the file
        raise
    _open[id(conn)] = _Attachment(instance, alias, weakref.finalize(conn, _abandoned, id(conn), instance))
    return conn


def keep_private(conn: duckdb.DuckDBPyConnection) -> None:
    """``conn`` is handed to code outside samza_nb, which may change its instance (register functions, set
    global settings, attach databases): close that instance with the file instead of reusing it. A no-op
    for a connection :func:`attach` did not make."""
    attachment = _open.get(id(conn))
    if attachment is not None:
        attachment.private = True


def detach(conn: duckdb.DuckDBPyConnection) -> None:
    """Close ``conn``; when :func:`attach` made it, also detach its file (DuckDB checkpoints it) and put
    its instance back in the pool (or close it, after :func:`keep_private`). A failure propagates
    (DuckDB's error): a failed ``close`` (a query still running on a cursor) can be retried; after a
    failed detach the instance is closed."""
    conn.close()
    attachment = _open.pop(id(conn), None)
    if attachment is None:
        return
    attachment.finalizer.detach()
    instance, alias = attachment.instance, attachment.alias
    if attachment.private:
        instance.close()  # its last connection: DuckDB checkpoints the file and releases it
        return
    placeholder = f"samza_nb_idle_{next(_names)}"
    base = instance.base
    try:
        base.execute(f"ATTACH ':memory:' AS {placeholder}")
        base.execute(f"USE {placeholder}")
        base.execute(f"DETACH {alias}")
    except BaseException:
        instance.close()
        raise
    instance.default = placeholder
    _give_back(instance)


def idle_count() -> int:
    """Idle instances in the pool now (for tests and metrics)."""
    with _lock:
        return len(_idle)


def _give_back(instance: _Instance) -> None:
    with _lock:
        if len(_idle) < MAX_IDLE_INSTANCES:
            _idle.append(instance)
            return
    instance.close()


def _abandoned(key: int, instance: _Instance) -> None:
    """A connection of :func:`attach` was collected without :func:`detach`: release its file."""
    _open.pop(key, None)
    instance.close()


def _after_fork_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _inherited.extend(_idle)
    _idle.clear()
    for attachment in _open.values():
        attachment.finalizer.detach()
        _inherited.append(attachment.instance)
    _open.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["MAX_IDLE_INSTANCES", "attach", "detach", "idle_count", "keep_private"]
