"""The example's input: a day of synthetic clicks and a users table, as parquet (deterministic: a seed).

``write_inputs(directory, users=..., clicks=...)`` writes ``users.parquet`` (user_id, country, plan) and
``clicks/part-<n>.parquet`` (user_id, page, ts, is_bot) with pyarrow, unless they are there already; bots
(a few users with many clicks) are what the Spark plan filters out.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ("de", "fr", "in", "jp", "us", "br")
PLANS = ("free", "pro")
PAGES = ("/", "/search", "/item", "/cart", "/checkout", "/help")
DAY = datetime(2026, 11, 23, tzinfo=UTC)


def write_inputs(directory: str | Path, *, users: int = 200, clicks: int = 20_000, files: int = 3) -> Path:
    """Write the inputs under ``directory`` (created) unless present; the directory."""
    root = Path(directory)
    if (root / "users.parquet").exists() and (root / "clicks").is_dir():
        return root
    rng = random.Random(14)
    (root / "clicks").mkdir(parents=True, exist_ok=True)
    ids = [f"u{n:04d}" for n in range(users)]
    bots = set(rng.sample(ids, max(1, users // 50)))
    table = pa.table(
        {
            "user_id": ids,
            "country": [rng.choice(COUNTRIES) for _ in ids],
            "plan": [rng.choice(PLANS) for _ in ids],
        }
    )
    pq.write_table(table, root / "users.parquet")
    rows: list[tuple[str, str, datetime, bool]] = []
    for _ in range(clicks):
        user = rng.choice(ids) if rng.random() > 0.2 else rng.choice(sorted(bots))
        at = DAY + timedelta(seconds=rng.randrange(24 * 3600))
        rows.append((user, rng.choice(PAGES), at, user in bots))
    per_file = -(-len(rows) // files)
    for n in range(files):
        part = rows[n * per_file : (n + 1) * per_file]
        pq.write_table(
            pa.table(
                {
                    "user_id": [r[0] for r in part],
                    "page": [r[1] for r in part],
                    "ts": pa.array([r[2] for r in part], pa.timestamp("ms", tz="UTC")),
                    "is_bot": [r[3] for r in part],
                }
            ),
            root / "clicks" / f"part-{n}.parquet",
        )
    return root


__all__ = ["write_inputs"]
