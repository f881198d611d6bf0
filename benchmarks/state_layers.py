"""The store layers without a container: a per-key count (get + put per message) through the full layered
store as a ratio to a plain dict measured in the same run, plus what the DuckDB engine costs per row.

Each run checks what it computed (benchmarks/output_check.py): every key's final count (and its last
changelog value) against ``collections.Counter``, the engine's rows after the upserts and deletes as DuckDB
reads them, the reads' values.

Run: ``python benchmarks/state_layers.py [--messages N] [--keys K] [--runs R] [--rows N] [--operations N]``;
prints medians.
"""

from __future__ import annotations

import argparse
import random
import statistics
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb

from benchmarks.output_check import same
from samza_nb.checkpoint.duckdb import ensure_schema
from samza_nb.config import Config
from samza_nb.storage import DuckDBStoreFactory
from samza_nb.storage.duckdb.engine import DuckDBEngine


def open_db(directory: str) -> duckdb.DuckDBPyConnection:
    path = str(Path(directory) / "samza.duckdb")
    conn = duckdb.connect(path)
    ensure_schema(conn, path, "bench", "1")
    return conn


def commit(conn: duckdb.DuckDBPyConnection, engine: DuckDBEngine) -> float:
    """One commit as the StorageManager does it; its duration in seconds."""
    start = time.perf_counter()
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    cur.commit()
    engine.mark_committed()
    cur.close()
    return time.perf_counter() - start


def count_dict(words: list[str]) -> float:
    counts: dict[str, int] = {}
    start = time.perf_counter()
    for key in words:
        counts[key] = counts.get(key, 0) + 1
    elapsed = time.perf_counter() - start
    same("plain dict: the final count of every key", counts, dict(Counter(words)))
    return elapsed


def count_store(words: list[str], settings: dict[str, str], changelog: bool) -> tuple[float, float]:
    """Seconds for the counting loop (with a flush + commit at the end), and for that final commit."""
    config = {
        "job.name": "bench",
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
        **settings,
    }
    if changelog:
        config["stores.counts.changelog"] = "kafka.counts-changelog"
    records: list[tuple[bytes, bytes | None]] = []
    with tempfile.TemporaryDirectory() as directory:
        conn = open_db(directory)
        store, engine = DuckDBStoreFactory().get_store(
            "counts", 0, Config(config), conn, _append_one(records) if changelog else None
        )
        get, put = store.get, store.put
        start = time.perf_counter()
        for key in words:
            put(key, (get(key) or 0) + 1)
        store.flush()
        commit_seconds = commit(conn, engine)
        elapsed = time.perf_counter() - start
        what = f"store {settings or 'defaults'}{' + changelog' if changelog else ''}"
        expected = Counter(words)
        same(f"{what}: the final count of every key", store.get_all(list(expected)), dict(expected))
        if changelog:  # the last change of each key on the changelog is its final count (string, long)
            last = {
                key.decode(): struct.unpack(">q", value)[0] for key, value in records if value is not None
            }
            same(f"{what}: the changelog's last value of every key", last, dict(expected))
        engine.close()
        conn.close()
    return elapsed, commit_seconds


def _append_one(records: list[Any]) -> Callable[[bytes, bytes | None], None]:
    def send(key: bytes, value: bytes | None) -> None:
        records.append((key, value))

    return send


def write_rates(rows: int) -> dict[str, float]:
    """Rows per second of write_pending + commit: into an empty table, over existing rows, and deletes."""
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as directory:
        conn = open_db(directory)
        engine = DuckDBEngine(conn, "store__w__p0")
        engine.put_all([(b"key-%d" % i, b"%d" % i) for i in range(rows)])
        rates["upsert, new keys"] = rows / commit(conn, engine)
        engine.put_all([(b"key-%d" % i, b"x%d" % i) for i in range(rows)])
        rates["upsert, existing keys"] = rows / commit(conn, engine)
        deleted = range(0, rows, 2)
        engine.delete_all([b"key-%d" % i for i in deleted])
        rates["delete"] = len(deleted) / commit(conn, engine)
        engine.close()
        # What the table holds now, read by DuckDB itself: every odd key with its upserted value.
        table = conn.execute(f'SELECT k, v FROM "{engine.table}"').fetchall()
        expected = {b"key-%d" % i: b"x%d" % i for i in range(1, rows, 2)}
        same(
            "write_pending: the rows after upserts and deletes",
            {bytes(k): bytes(v) for k, v in table},
            expected,
        )
        small = DuckDBEngine(conn, "store__w__p1")
        small.put_all([(b"key-%d" % i, b"v") for i in range(rows)])
        commit(conn, small)
        batch = 10_000
        seconds = 0.0
        for round_ in range(5):
            small.put_all([(b"key-%d" % ((i * 7 + round_) % rows), b"w") for i in range(batch)])
            seconds += commit(conn, small)
        rates[f"upsert {batch:,} into {rows:,} rows"] = 5 * batch / seconds
        small.close()
        start = time.perf_counter()
        reopened = DuckDBEngine(conn, "store__w__p0")
        rates["open + preload (rows/s)"] = reopened.row_count() / (time.perf_counter() - start)
        same("open + preload: the rows", reopened.row_count(), len(expected))
        unmirrored = DuckDBEngine(conn, "store__w__p0", preload_max_rows=0, read_cache_size=0)
        keys = [b"key-%d" % i for i in range(1, 2001, 2)]
        start = time.perf_counter()
        read = [unmirrored.get(key) for key in keys[:200]]
        rates["point reads without mirror (reads/s)"] = 200 / (time.perf_counter() - start)
        same("point reads without mirror", read, [expected.get(key) for key in keys[:200]])
        start = time.perf_counter()
        found = unmirrored.get_all(keys)
        rates["get_all 1,000 keys without mirror (keys/s)"] = len(keys) / (time.perf_counter() - start)
        same("get_all without mirror", dict(found), {k: expected[k] for k in keys if k in expected})
        reopened.close()
        unmirrored.close()
        conn.close()
    return rates


def hit_costs(operations: int = 1_000_000) -> dict[str, float]:
    """ns per get and per put on a cache hit (keys all cached, no batch write in the measured loop)."""
    with tempfile.TemporaryDirectory() as directory:
        conn = open_db(directory)
        config = Config(
            {
                "job.name": "bench",
                "stores.c.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
                "stores.c.key.serde": "string",
                "stores.c.msg.serde": "long",
                "stores.c.object.cache.size": "2000",
                "stores.c.write.batch.size": "2000",
            }
        )
        store, engine = DuckDBStoreFactory().get_store("c", 0, config, conn)
        keys = [f"k{i}" for i in range(1000)]
        for key in keys:
            store.put(key, 1)
        sequence = keys * (operations // len(keys))
        get, put = store.get, store.put
        start = time.perf_counter()
        for key in sequence:
            get(key)
        get_ns = (time.perf_counter() - start) / len(sequence) * 1e9
        start = time.perf_counter()
        for key in sequence:
            put(key, 2)
        put_ns = (time.perf_counter() - start) / len(sequence) * 1e9
        same("cache hits: every key after the puts", store.get_all(keys), dict.fromkeys(keys, 2))
        plain: dict[str, int] = dict.fromkeys(keys, 1)
        start = time.perf_counter()
        for key in sequence:
            plain.get(key)
        dict_ns = (time.perf_counter() - start) / len(sequence) * 1e9
        engine.close()
        conn.close()
    return {"cache-hit get": get_ns, "cache-hit put (dirty, no batch write)": put_ns, "dict.get": dict_ns}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows for the write_pending figures")
    parser.add_argument("--operations", type=int, default=1_000_000, help="gets and puts of the cache hits")
    args = parser.parse_args(argv)
    rng = random.Random(1)
    vocabulary = [f"key-{i}" for i in range(args.keys)]
    words = [rng.choice(vocabulary) for _ in range(args.messages)]

    cache_all = str(max(2 * args.keys, 1000))
    big = {"stores.counts.object.cache.size": cache_all}
    variants = {
        "store, cache 1000 (default)": ({}, False),
        f"store, cache {int(cache_all):,}": (big, False),
        f"store, cache {int(cache_all):,} + changelog": (big, True),
        "store, no cache": ({"stores.counts.object.cache.size": "0"}, False),
    }
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
    plain_runs = []
    for _ in range(args.runs):
        plain = count_dict(words)
        plain_runs.append(plain)
        for name, (settings, changelog) in variants.items():
            seconds, commit_seconds = count_store(words, settings, changelog)
            results[name].append((seconds, commit_seconds, plain / seconds))

    n = args.messages
    print(f"medians of {args.runs} runs: per-key count (get + put), {n:,} messages over {args.keys:,} keys")
    print(f"{'plain dict':40} {n / statistics.median(plain_runs):14,.0f} msgs/s")
    for name, runs in results.items():
        rate = n / statistics.median(s for s, _, _ in runs)
        ratio = statistics.median(r for _, _, r in runs)
        final = statistics.median(c for _, c, _ in runs) * 1000
        print(f"{name:40} {rate:14,.0f} msgs/s  ratio {ratio:.3f}  (final commit {final:,.0f} ms)")
    print()
    for name, value in hit_costs(args.operations).items():
        print(f"{name:40} {value:14,.0f} ns/op")
    print()
    print(f"DuckDB engine, {args.rows:,} rows, one transaction each (write_pending + commit):")
    for name, value in write_rates(args.rows).items():
        unit = "" if "/s)" in name else " rows/s"
        print(f"  {name:44} {value:14,.0f}{unit}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
