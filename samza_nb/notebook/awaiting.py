"""``%samza_run --wait`` in a Jupyter kernel waits without blocking the kernel's event loop.

A line magic is a plain call: while it blocks, ipykernel handles no message, so a dashboard's Stop button
(a widget message) would do nothing until the job ended. In a kernel, an input transformer therefore
rewrites the line ``%samza_run ... --wait ...`` into an ``await`` of :func:`run_and_wait`: the cell
becomes an awaiting cell (IPython's autoawait), the job starts on its own thread as usual, and the cell
waits on the kernel's loop, which keeps dispatching widget messages meanwhile (ipykernel dispatches comm
messages while an awaiting cell runs). The kernel's interrupt cancels an awaiting cell: that becomes a
graceful stop (see :meth:`~samza_nb.notebook.job.JobRun.wait_async`). Outside a kernel (a terminal
IPython, tests' shells) the magic blocks as before.
"""

from __future__ import annotations

import ast
import re
import shlex
from typing import Any

_MAGIC_CALL = re.compile(
    r"get_ipython\(\)\.run_line_magic\('samza_run', (?P<args>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)"
)
_AWAIT = (
    "(await __import__('samza_nb.notebook.awaiting', fromlist=['run_and_wait'])"
    ".run_and_wait(get_ipython(), {args}))"
)


def waits(args: str) -> bool:
    """True when the magic's argument line asks to ``--wait`` (comments ignored)."""
    try:
        return "--wait" in shlex.split(args, comments=True)
    except ValueError:
        return False  # a quoting mistake: the magic itself reports it


def rewrite(lines: list[str]) -> list[str]:
    """IPython input transformer (after magics became calls): ``%samza_run ... --wait`` lines await."""

    def replace(match: re.Match[str]) -> str:
        literal = match.group("args")
        try:
            args = ast.literal_eval(literal)
        except (ValueError, SyntaxError):
            return match.group(0)
        return _AWAIT.format(args=literal) if isinstance(args, str) and waits(args) else match.group(0)

    return [_MAGIC_CALL.sub(replace, line) for line in lines]


def install(shell: Any) -> bool:
    """Install :func:`rewrite` on ``shell`` when it is a Jupyter kernel's shell with autoawait; True
    when installed (once per shell)."""
    if getattr(shell, "kernel", None) is None or not getattr(shell, "autoawait", False):
        return False
    transformers = shell.input_transformers_post
    if rewrite not in transformers:
        transformers.append(rewrite)
    return True


async def run_and_wait(shell: Any, line: str) -> None:
    """What an awaiting ``%samza_run --wait`` line runs: start the job, then wait on the kernel's loop."""
    from samza_nb.notebook.magics import SamzaMagics

    magics = shell.magics_manager.registry.get(SamzaMagics.__name__)
    if not isinstance(magics, SamzaMagics):
        shell.run_line_magic("samza_run", line)
        return
    await magics.run_awaiting(line)


__all__ = ["install", "rewrite", "run_and_wait", "waits"]
