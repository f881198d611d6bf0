"""Writes the example's users table, ``examples/enrich/users.parquet`` (user_id, country), with pyarrow:
``python -m examples.enrich.users [PATH] [--users N]``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

COUNTRIES = ("de", "fr", "in", "jp", "us", "br")


def write_users(path: str | Path, users: int = 50) -> Path:
    """Write ``users`` users (``u000``, ``u001``, …, countries in turn) to ``path``; the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    ids = [f"u{n:03d}" for n in range(users)]
    pq.write_table(pa.table({"user_id": ids, "country": [COUNTRIES[n % 6] for n in range(users)]}), target)
    return target


def main(argv: list[str] | None = None) -> None:
    """The command line (see the module)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("path", nargs="?", default=str(Path(__file__).parent / "users.parquet"))
    parser.add_argument("--users", type=int, default=50)
    args = parser.parse_args(argv)
    print(write_users(args.path, args.users))


if __name__ == "__main__":
    main()
