"""``%samza_get <store> <key> [--committed] [--name NAME]``: one key's value in a running job's store.

The key is typed as text and read as the store's key serde reads it (a number for ``int``/``long`` keys,
JSON for ``json`` keys: quote it as the shell does, ``%samza_get counts "new york"``). The live value
includes writes not committed yet; ``--committed`` shows the value as of the last commit. The line says
which container, task and partition answered (see :mod:`samza_nb.notebook.runs.store_lookup`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics.arguments import MagicArguments
from samza_nb.notebook.runs.store_lookup import lookup_text

if TYPE_CHECKING:
    from samza_nb.container.queries import KeyAnswer
    from samza_nb.notebook.session import NotebookSession

GET_ARGS = MagicArguments("samza_get")
GET_ARGS.add_argument("store", help="the store")
GET_ARGS.add_argument("key", help="the key, as text (a number for int keys, JSON for json keys)")
GET_ARGS.add_argument("--committed", action="store_true", help="the value as of the last commit")
GET_ARGS.add_argument("--name", help="the job (default: the latest that has the store)")


def get(session: NotebookSession, line: str) -> KeyAnswer:
    """Parse ``line`` and look the key up in job NAME (default: the latest run that has the store)."""
    args = GET_ARGS.parse(line)
    run = session.job(args.name, "samza_get").run if args.name else session.store_run(args.store)
    if run is None:
        raise NotebookError("samza_get: no job has run yet: %samza_run the job, then look into its stores")
    return lookup_text(run, args.store, args.key, committed=args.committed)


__all__ = ["GET_ARGS", "get"]
