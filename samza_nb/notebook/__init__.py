"""The notebook layer: ``%load_ext samza_nb`` magics, the live dashboard and the notebook's job session.

It depends on the rest of samza_nb (the container, the observe bus), never the reverse. IPython is needed
for the magics; ipywidgets for the dashboard (without it, status is shown as text).
"""

from __future__ import annotations

from samza_nb.notebook.errors import NotebookError

__all__ = ["NotebookError"]
