"""What the ``samza-nb`` commands share on the console: one-line messages and errors, logging, signal
routing, and the summary of a run."""

from __future__ import annotations

import logging
import signal
import sys
import traceback
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TextIO

from samza_nb.errors import ConfigError, SamzaError, is_bad_message

if TYPE_CHECKING:
    import asyncio

    from samza_nb.api.streams import SystemStreamPartition

PROG = "samza-nb"
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_CONFIG = 2
EXIT_BAD_MESSAGE = 3
EXIT_FENCED = 4
"""A container stopped without committing: a newer driver of its job took the job over (fenced)."""
"""A bad message failed it (BadMessageError): a restart would fail on the same message."""
PROGRESS_INTERVAL_S = 0.2
SUMMARY_TASKS = 8
"""At most this many tasks' checkpoints are spelled out in the summary line."""


def install_signal_handlers(
    loop: asyncio.AbstractEventLoop, handler: Callable[[int], None]
) -> Callable[[], None]:
    """Route SIGINT and SIGTERM to ``handler`` on the loop; returns a function that undoes it."""
    installed: list[tuple[signal.Signals, Any, bool]] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous = signal.getsignal(sig)
        try:
            loop.add_signal_handler(sig, handler, int(sig))
            installed.append((sig, previous, True))
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no Unix loop
            try:
                signal.signal(sig, lambda s, _f: loop.call_soon_threadsafe(handler, s))
            except ValueError:
                continue
            installed.append((sig, previous, False))

    def restore() -> None:
        for sig, previous, on_loop in installed:
            if on_loop:
                loop.remove_signal_handler(sig)
            if previous is not None:
                signal.signal(sig, previous)

    return restore


def isatty(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal (False for anything that cannot tell)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(job: str, *, enabled: bool) -> Any:
    """A tqdm bar on stderr counting messages (None when not ``enabled``)."""
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(
        desc=job,
        unit="msg",
        unit_scale=True,
        file=sys.stderr,
        mininterval=PROGRESS_INTERVAL_S,
        dynamic_ncols=True,
    )


def summary(
    job: str,
    processed: int,
    elapsed: float,
    checkpoints: Mapping[str, Mapping[SystemStreamPartition, str]] | None,
) -> str:
    """One line: messages, time, rate and each task's checkpointed offsets (or why there are none)."""
    rate = processed / elapsed if elapsed > 0 else 0.0
    text = f"{PROG}: {job}: processed {processed} messages in {elapsed:.2f} s ({rate:,.0f} msgs/s)"
    if checkpoints is None:
        return text + "; checkpoints: unavailable"
    if not checkpoints:
        return text + "; checkpoints: none"
    parts = []
    for task, offsets in list(checkpoints.items())[:SUMMARY_TASKS]:
        spelled = ", ".join(f"{ssp}={offset}" for ssp, offset in sorted(offsets.items())) or "none"
        parts.append(f"{task} [{spelled}]")
    if len(checkpoints) > SUMMARY_TASKS:
        parts.append(f"... {len(checkpoints) - SUMMARY_TASKS} more tasks")
    return text + "; checkpoints: " + "; ".join(parts)


def report_error(exc: BaseException, verbose: bool, who: str = "") -> int:
    """One line on stderr (plus the traceback with --verbose), ``who`` before "error:"; the exit status for
    ``exc``."""
    if verbose:
        traceback.print_exception(exc, file=sys.stderr)
    if isinstance(exc, SamzaError):
        message = str(exc)
    else:
        message = f"unexpected {type(exc).__name__}: {exc}"
        if not verbose:
            message += " (run with --verbose for the traceback)"
    say(f"{who}error: " + " ".join(message.split()))
    if is_bad_message(exc):
        return EXIT_BAD_MESSAGE
    return EXIT_CONFIG if isinstance(exc, ConfigError) else EXIT_FAILED


def say(text: str) -> None:
    """``samza-nb: text`` on stderr."""
    print(f"{PROG}: {text}", file=sys.stderr, flush=True)


def setup_logging(verbose: bool) -> None:
    """Warnings (INFO with --verbose) to stderr, prefixed with the program name."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format=f"{PROG}: %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


__all__ = [
    "EXIT_BAD_MESSAGE",
    "EXIT_CONFIG",
    "EXIT_FAILED",
    "EXIT_FENCED",
    "EXIT_OK",
    "PROG",
    "PROGRESS_INTERVAL_S",
    "install_signal_handlers",
    "isatty",
    "progress_bar",
    "report_error",
    "say",
    "setup_logging",
    "summary",
]
