"""The notebook layer: ``%load_ext samza_nb`` magics, the live dashboard and the notebook's job session.

It depends on the rest of samza_nb (the container, the observe bus), never the reverse. IPython is needed
for the magics; ipywidgets for the dashboard (without it, status is shown as text).

:func:`job` is the Python handle on a running notebook job: ``job().pause()``, ``job().step(3)``,
``job().resume()``, ``job().set({"task.max.concurrency": 8})``, ``job().swap(NewTask)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.notebook.errors import NotebookError

if TYPE_CHECKING:
    from samza_nb.notebook.runs.steering import NotebookJob


def job(name: str | None = None) -> NotebookJob:
    """The handle on the notebook's latest job run (or the run of job ``name``), to pause, step, resume,
    set live knobs and swap its task from Python. A NotebookError when the extension is not loaded in
    this IPython or no such job has run."""
    from IPython import get_ipython

    from samza_nb.notebook.magics.registration import SamzaMagics

    shell = get_ipython()
    magics = shell.magics_manager.registry.get(SamzaMagics.__name__) if shell is not None else None
    if not isinstance(magics, SamzaMagics):
        raise NotebookError("samza_nb.notebook.job(): load the extension first (%load_ext samza_nb)")
    return magics.session.job(name, "job")


__all__ = ["NotebookError", "job"]
