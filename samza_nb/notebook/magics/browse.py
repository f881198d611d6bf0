"""``%samza_browse <system.stream> [--partition P] [--from OFFSET] [--key K] [-n N] [--name NAME]``: the
messages of a stream the job knows (an input, an intermediate stream, an output, a changelog), as a table.

The stream is read with its system's admin and consumer, as the job's config (the latest run's, or job
NAME's; before a first run, the notebook's) sets them up, values and keys decoded with the stream's serdes
(:mod:`samza_nb.systems.browse`). A table of partition, offset, key, value, headers and timestamp: HTML in
Jupyter (CSS class ``samza-browse``), text elsewhere. A stream, partition or offset that does not exist is
one line naming it.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from samza_nb.container.event_loop import run_blocking
from samza_nb.errors import SamzaError
from samza_nb.notebook.display.text_status import html_table, text_table
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics.arguments import MagicArguments
from samza_nb.systems.browse import HEADERS, Browse, add_browse_arguments, browse, message_row, parse_stream

if TYPE_CHECKING:
    from samza_nb.config import Config

BROWSE_ARGS = MagicArguments("samza_browse")
add_browse_arguments(BROWSE_ARGS)
BROWSE_ARGS.add_argument("--name", help="the job whose config names the stream (default: the latest)")


def browse_command(stream: str, partition: int, offset: str) -> str:
    """The ``%samza_browse`` line that shows the message at ``offset`` of ``stream``'s ``partition``."""
    return f"%samza_browse {stream} --partition {partition} --from {offset} -n 1"


class BrowseReport:
    """What ``%samza_browse`` returns: the :class:`~samza_nb.systems.browse.Browse` (``result``, its
    ``messages`` with their decoded keys and values) shown as a table, with a line saying what was read."""

    def __init__(self, result: Browse) -> None:
        self.result = result

    @property
    def messages(self) -> tuple[Any, ...]:
        """The messages shown (:class:`~samza_nb.systems.browse.BrowsedMessage`), by partition and offset."""
        return self.result.messages

    @property
    def rows(self) -> list[tuple[str, ...]]:
        """One row of cells per message."""
        return [message_row(message) for message in self.result.messages]

    @property
    def title(self) -> str:
        """``log.words: 3 messages (2 partitions)``, or ``(partition 1 of 2)`` when one was read."""
        count, result = len(self.result.messages), self.result
        total = len(result.partitions)
        if len(result.read) == 1 and total > 1:
            which = f"partition {result.read[0]} of {total}"
        else:
            which = f"{total} partition{'' if total == 1 else 's'}"
        return f"{result.stream}: {count} message{'' if count == 1 else 's'} ({which})"

    def __str__(self) -> str:
        parts = [self.title]
        if self.result.messages:
            parts.append(text_table(HEADERS, self.rows))
        parts += self.result.notes
        return "\n".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        parts = [f"<div><b>{html.escape(self.title)}</b></div>"]
        if self.result.messages:
            parts.append(html_table(HEADERS, self.rows, "samza-browse"))
        parts += [f"<div class='samza-note'>{html.escape(note)}</div>" for note in self.result.notes]
        return "".join(parts)


def browse_stream(config: Config, line: str) -> BrowseReport:
    """``%samza_browse``'s work on the job ``config``: every problem is one NotebookError line."""
    args = BROWSE_ARGS.parse(line)
    try:
        stream = parse_stream(args.stream)
        result = run_blocking(
            browse(config, stream, partition=args.partition, start=args.start, key=args.key, limit=args.limit)
        )
    except SamzaError as exc:
        raise NotebookError(f"samza_browse: {exc}") from None
    return BrowseReport(result)


__all__ = ["BROWSE_ARGS", "BrowseReport", "browse_command", "browse_stream"]
