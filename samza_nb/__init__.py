"""samza_nb: Apache Samza's stream processing model in Python, Jupyter-first.

The public names below are a promise (a test pins ``__all__``). ``%load_ext samza_nb`` loads the notebook
magics.
"""

from __future__ import annotations

from typing import Any

from samza_nb.api import (
    END_OF_STREAM_OFFSET,
    AsyncStreamTask,
    ClosableTask,
    EndOfStreamListenerTask,
    IncomingMessageEnvelope,
    InitableTask,
    MessageCollector,
    OutgoingMessageEnvelope,
    RequestScope,
    StreamTask,
    SystemStream,
    SystemStreamPartition,
    TaskCallback,
    TaskContext,
    TaskCoordinator,
    WindowableTask,
)
from samza_nb.config import Config
from samza_nb.errors import ConfigError, SamzaError, TaskFailedError

__version__ = "0.9.0"

__all__ = [
    "END_OF_STREAM_OFFSET",
    "AsyncStreamTask",
    "ClosableTask",
    "Config",
    "ConfigError",
    "EndOfStreamListenerTask",
    "IncomingMessageEnvelope",
    "InitableTask",
    "MessageCollector",
    "OutgoingMessageEnvelope",
    "RequestScope",
    "SamzaError",
    "StreamTask",
    "SystemStream",
    "SystemStreamPartition",
    "TaskCallback",
    "TaskContext",
    "TaskCoordinator",
    "TaskFailedError",
    "WindowableTask",
]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext samza_nb``: register the samza_nb magics (needs the ``notebook`` extra)."""
    try:
        from samza_nb.notebook.extension import load_ipython_extension as load
    except ImportError as exc:
        raise SamzaError(
            "the samza_nb notebook layer needs IPython and ipywidgets "
            f"(pip install 'samza_nb[notebook]'): {exc}"
        ) from None
    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext samza_nb``: stop the notebook session's job and remove the magics."""
    from samza_nb.notebook.extension import unload_ipython_extension as unload

    unload(ipython)
