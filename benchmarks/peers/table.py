"""The peers benchmark's Markdown: one row per workload, one column per library, each cell a rate and its
ratio to samza_nb's in the same runs, or "—" with the reason as a numbered footnote. Pure formatting (no
library of the benchmark imported), so a unit test can check it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

REFERENCE = "samza_nb"


@dataclass(frozen=True)
class Measured:
    """A median rate (msg/s); its ratio to samza_nb's (None in samza_nb's own column); for W3 its share
    of the ideal rate; the spread of its runs (half their range over the median; None: one run)."""

    rate: float
    ratio: float | None = None
    share: float | None = None
    spread: float | None = None


@dataclass(frozen=True)
class Missing:
    """No figure: the library cannot run the workload (or the run failed), for ``reason``."""

    reason: str


Cell = Measured | Missing


def format_cell(cell: Cell, footnotes: list[str]) -> str:
    """The cell's text; a Missing cell's reason is added to ``footnotes`` (once per distinct reason) and
    the cell refers to it by number."""
    if isinstance(cell, Missing):
        if cell.reason not in footnotes:
            footnotes.append(cell.reason)
        return f"— ({footnotes.index(cell.reason) + 1})"
    text = f"{cell.rate:,.0f} msg/s"
    if cell.spread is not None:
        text += f" ±{cell.spread:.0%}"
    if cell.share is not None:
        text += f", {cell.share:.0%} of ideal"
    if cell.ratio is not None:
        text += " (x<0.01)" if cell.ratio < 0.005 else f" (x{cell.ratio:.2f})"
    return text


def leader(cells: Mapping[str, Cell], runs: Mapping[str, Sequence[float]]) -> str:
    """One sentence on who leads a row: the fastest median, a lead only when its slowest run beats every
    other library's fastest run (spreads that overlap: no lead claimed)."""
    measured = {name: cell for name, cell in cells.items() if isinstance(cell, Measured) and runs.get(name)}
    if len(measured) < 2:
        return "one library measured"
    order = sorted(measured, key=lambda name: measured[name].rate, reverse=True)
    first, second = order[0], order[1]
    if min(runs[first]) > max(max(runs[name]) for name in order[1:]):
        return f"{first} leads (its slowest run beats every other library's fastest)"
    return f"no lead: {first} and {second} overlap within their runs' spread"


def markdown_table(columns: Sequence[str], rows: Sequence[tuple[str, Mapping[str, Cell]]]) -> str:
    """A Markdown table (a row per workload, a column per library) followed by its numbered footnotes;
    a column a row has no cell for is a Missing cell "not measured in this run"."""
    footnotes: list[str] = []
    lines = ["| workload | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for name, cells in rows:
        texts = [format_cell(cells.get(c, Missing("not measured in this run")), footnotes) for c in columns]
        lines.append(f"| {name} | " + " | ".join(texts) + " |")
    if footnotes:
        lines.append("")
        lines.extend(f"- ({i}) {reason}" for i, reason in enumerate(footnotes, 1))
    return "\n".join(lines)
