"""A task for multi-container tests: importable by the container processes."""

from __future__ import annotations

import os
import sys
import time
from typing import Any


class Record:
    """Appends ``<task> <pid> <stream> <offset> <message>`` to ``processed.log`` for every message; sleeps
    ``test.sleep.ms`` per message; fails on the message ``test.fail.on``; with ``test.stderr.line.bytes``,
    writes one stderr line that long at init and 2 KB lines to stderr per message."""

    def init(self, context: Any) -> None:
        self.task = context.task_name.replace(" ", "_")
        self.sleep = int(context.config.get_str("test.sleep.ms", "0") or 0) / 1000
        self.fail_on = context.config.get_str("test.fail.on", "")
        self.log = open("processed.log", "a")  # noqa: SIM115 (closed in close())
        self.noise = int(context.config.get_str("test.stderr.line.bytes", "0") or 0)
        if self.noise:
            sys.stderr.write("x" * self.noise + "\n")
            sys.stderr.flush()

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message
        if isinstance(message, bytes):
            message = message.decode()
        if self.fail_on and message == self.fail_on:
            raise ValueError(f"cannot process {message!r}")
        self.log.write(f"{self.task} {os.getpid()} {envelope.ssp.stream} {envelope.offset} {message}\n")
        self.log.flush()
        if self.noise:
            sys.stderr.write("y" * 2048 + "\n")
        if self.sleep:
            time.sleep(self.sleep)

    def close(self) -> None:
        self.log.close()


class Count:
    """Counts messages per key (the message key, as text) in the store ``counts``; with ``test.sleep.ms``,
    sleeps that long per message."""

    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")
        self.sleep = int(context.config.get_str("test.sleep.ms", "0") or 0) / 1000

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        key = envelope.key.decode() if isinstance(envelope.key, bytes) else str(envelope.key)
        self.counts.put(key, (self.counts.get(key) or 0) + 1)
        if self.sleep:
            time.sleep(self.sleep)
