"""QueryResult: the rows a store query returned, and their renderings (pandas, Arrow, HTML in notebooks)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from samza_nb.errors import SamzaError


@dataclass(frozen=True)
class QueryResult:
    """The rows of a store query and their column names."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)

    def to_pandas(self) -> Any:
        """The result as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise SamzaError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows, columns=list(self.columns))

    def to_arrow(self) -> Any:
        """The result as a pyarrow Table."""
        import pyarrow as pa

        return pa.table({name: [row[i] for row in self.rows] for i, name in enumerate(self.columns)})

    def __repr__(self) -> str:
        return f"QueryResult(columns={self.columns!r}, rows=<{len(self.rows)} rows>)"

    def _repr_html_(self, limit: int = 50) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(repr(v) if isinstance(v, bytes) else str(v))}</td>" for v in row)
            + "</tr>"
            for row in self.rows[:limit]
        )
        more = f"<p>{len(self.rows) - limit} more rows</p>" if len(self.rows) > limit else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


__all__ = ["QueryResult"]
