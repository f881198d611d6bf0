"""Page views per user and minute, with the high-level API: a partition_by, an event-time tumbling window.

The input is JSON lines ``{"user": ..., "page": ..., "ts": <epoch ms>}``; health checks are dropped, the
views are repartitioned by user through an intermediate stream on the embedded durable log, and counted
per user in one-minute windows of event time. The output is one JSON line per user and minute.
"""

from __future__ import annotations

import json
from typing import Any

from samza_nb.operators import KV, StreamApplication, StreamApplicationDescriptor, WindowPane, Windows


def count_view(view: KV, count: int) -> int:
    """One more view in the pane."""
    return count + 1


def as_row(pane: WindowPane) -> dict[str, Any]:
    """The output row of one pane."""
    return {"user": pane.key, "minute_start": pane.start_ms, "views": pane.value}


class PageViewsPerUser(StreamApplication):
    """Counts page views per user and minute of event time."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        """page-views → parse → drop health checks → partition by user → 1-minute counts → output."""
        views = app.get_input_stream("page-views")
        out = app.get_output_stream("views-per-user")
        (
            views.map(json.loads)
            .filter(lambda view: view["page"] != "/health")
            .partition_by(lambda view: view["user"], None, "by-user")
            .window(
                Windows.tumbling(
                    60_000,
                    init=lambda: 0,
                    fold=count_view,
                    key_fn=lambda kv: kv.key,
                    timestamp_fn=lambda kv: kv.value["ts"],
                ),
                "views-per-minute",
            )
            .map(as_row)
            .send_to(out)
        )
