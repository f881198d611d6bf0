"""Helpers for the notebook tests: config cells over in-memory streams, filling streams, running cells."""

from __future__ import annotations

from typing import Any

from IPython.core.interactiveshell import InteractiveShell

from samza_nb.systems.inmemory.system import InMemoryBroker


def config_cell(broker: InMemoryBroker, *inputs: str, job: str = "nbjob", **extra: object) -> str:
    """A %%samza_config cell reading ``inputs`` (streams of ``broker``) from their oldest offset."""
    system = broker.namespace
    lines = [
        f"job.name = {job}",
        "task.inputs = " + ",".join(f"{system}.{stream}" for stream in inputs),
        f"systems.{system}.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory",
        f"systems.{system}.samza.offset.default = oldest",
    ]
    lines += [f"{key.replace('_', '.')} = {value}" for key, value in extra.items()]
    return "%%samza_config\n" + "\n".join(lines) + "\n"


def fill(broker: InMemoryBroker, stream: str, partitions: int, count: int, *, end: bool = True) -> None:
    """``count`` integers round robin over ``partitions`` partitions of ``stream``, then end-of-stream."""
    broker.create_stream(stream, partitions)
    for i in range(count):
        broker.send(stream, i, partition=i % partitions)
    if end:
        broker.end_stream(stream)


def run(shell: InteractiveShell, cell: str) -> Any:
    """Run ``cell``; return the ExecutionResult (errors are recorded in it, as in a notebook)."""
    return shell.run_cell(cell, store_history=False)


def error_line(result: Any, capsys: Any) -> str:
    """The one line a failed magic showed (``NotebookError: ...``), checking it is the cell's error and
    that no traceback was shown."""
    from samza_nb.notebook.errors import NotebookError

    captured = capsys.readouterr()
    text = (captured.out + captured.err).strip()
    assert isinstance(result.error_in_exec, NotebookError), result.error_in_exec
    assert "Traceback" not in text and "---------" not in text, text
    line = text.splitlines()[-1]
    assert line.startswith("NotebookError: "), text
    return line
