"""Runners: run a job in this process (``LocalJobRunner``) and the ``samza-nb`` command line."""

from samza_nb.container.loop.control import NextMessage, Step, Steps
from samza_nb.runtime.local import LocalJobRunner, load_task_factory

__all__ = ["LocalJobRunner", "NextMessage", "Step", "Steps", "load_task_factory"]
