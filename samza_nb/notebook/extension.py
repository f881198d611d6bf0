"""``%load_ext samza_nb``: registers the magics and binds the names a task cell needs.

Loading binds, in the notebook's namespace and only where the name is still free: samza_nb's public names
(``StreamTask``, ``InitableTask``, ``OutgoingMessageEnvelope``, ``SystemStream``, ...), so a ``%%samza_task``
cell needs no imports, and ``samza``, this notebook's :class:`~samza_nb.notebook.session.NotebookSession`
(for ``await samza.wait()``). Loading again (``%reload_ext``) stops the previous session's job first.
"""

from __future__ import annotations

from typing import Any

import samza_nb
from samza_nb.notebook.magics.registration import SamzaMagics

SESSION_NAME = "samza"


def load_ipython_extension(ipython: Any) -> None:
    """Register the samza_nb magics on ``ipython`` (an InteractiveShell)."""
    previous = ipython.magics_manager.registry.get(SamzaMagics.__name__)
    if isinstance(previous, SamzaMagics):
        previous.close()
    magics = SamzaMagics(ipython)
    ipython.register_magics(magics)
    names: dict[str, Any] = {name: getattr(samza_nb, name) for name in samza_nb.__all__}
    names[SESSION_NAME] = magics.session
    user_ns = ipython.user_ns
    free = {
        name: value
        for name, value in names.items()
        if name not in user_ns
        or (name == SESSION_NAME and previous is not None and user_ns[name] is previous.session)
    }
    ipython.push(free, interactive=False)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext samza_nb``: stop the session's job (the magics stay registered, as IPython does)."""
    magics = ipython.magics_manager.registry.get(SamzaMagics.__name__)
    if isinstance(magics, SamzaMagics):
        magics.close()


__all__ = ["load_ipython_extension", "unload_ipython_extension"]
