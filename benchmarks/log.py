"""The durable log: batched append (``send_batch`` + ``flush``) and read-back of 100-byte messages, each as
a ratio to writing / reading the same bytes with a plain file in the same run.

- append: ``send_batch`` of ``--batch`` records at a time (no key, one partition), then one ``flush``
  (fsync). Baseline: the same messages joined and written to a plain file batch by batch, then fsync.
- read: every record of the partition through ``DurableLog.read`` (``(offset, key, value)`` tuples, CRC
  checked). Baseline: the plain file read back whole and cut into the same messages.

Two inputs: messages of exactly ``--size`` bytes, and messages of varied sizes (uniform in
size/2 .. 3*size/2, the same mean). A batch whose values are all one size is cut in one cached ``struct``
call; other batches by a format built for the batch, which is slower. Both read from the page cache (the
files were just written). Run: ``python benchmarks/log.py [--messages N] [--batch B] [--runs R]
[--size S]``; prints medians of R runs.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb.systems.log import DurableLog


def plain_append(path: Path, batches: list[list[bytes]]) -> float:
    start = time.perf_counter()
    with path.open("wb") as file:
        for batch in batches:
            file.write(b"".join(batch))
        file.flush()
        os.fsync(file.fileno())
    return time.perf_counter() - start


def plain_read(path: Path, sizes: list[int]) -> tuple[float, int]:
    """Read the whole file back and cut it into messages of the given sizes."""
    start = time.perf_counter()
    count = at = 0
    with path.open("rb", buffering=0) as file:
        data = file.read()
    for length in sizes:
        data[at : at + length]
        at += length
        count += 1
    return time.perf_counter() - start, count


def log_append(directory: Path, batches: list[list[tuple[None, bytes, None]]]) -> float:
    log = DurableLog(directory)
    log.create_stream("bench", 1)
    start = time.perf_counter()
    for batch in batches:
        log.send_batch("bench", batch)
    log.flush()
    elapsed = time.perf_counter() - start
    log.close()
    return elapsed


def log_read(directory: Path) -> tuple[float, int]:
    log = DurableLog(directory)
    log.upcoming("bench", 0)  # opening (recovery) is not part of reading
    start = time.perf_counter()
    count = 0
    for _offset, _key, _value in log.read("bench", 0):
        count += 1
    elapsed = time.perf_counter() - start
    log.close()
    return elapsed, count


def one_run(messages: int, batch: int, size: int, varied: bool) -> dict[str, float]:
    rng = random.Random(1)
    values = [
        (b"%0*d" % (rng.randint(size // 2, size * 3 // 2) if varied else size, i)) for i in range(messages)
    ]
    plain_batches = [values[i : i + batch] for i in range(0, messages, batch)]
    log_batches = [[(None, v, None) for v in values[i : i + batch]] for i in range(0, messages, batch)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        gc.collect()
        plain_w = plain_append(root / "plain.bin", plain_batches)
        log_w = log_append(root / "log", log_batches)
        plain_r, plain_n = plain_read(root / "plain.bin", [len(v) for v in values])
        log_r, log_n = log_read(root / "log")
        same("plain file: messages read back", plain_n, messages)
        same("durable log: messages read back", log_n, messages)
        log = DurableLog(root / "log")  # what the timed read read, again: the bytes written, in order
        same("durable log: the values read back", [value for _, _, value in log.read("bench", 0)], values)
        log.close()
    return {
        "append": messages / log_w,
        "append_plain": messages / plain_w,
        "read": messages / log_r,
        "read_plain": messages / plain_r,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    print(f"medians of {args.runs} runs: {args.messages:,} messages, send_batch of {args.batch:,}")
    for varied in (False, True):
        runs = [one_run(args.messages, args.batch, args.size, varied) for _ in range(args.runs)]
        sizes = f"{args.size // 2}-{args.size * 3 // 2} bytes" if varied else f"{args.size} bytes"
        for kind, what in (("append", "send_batch + flush"), ("read", "read back")):
            rate = statistics.median(r[kind] for r in runs)
            plain = statistics.median(r[f"{kind}_plain"] for r in runs)
            ratio = statistics.median(r[kind] / r[f"{kind}_plain"] for r in runs)
            print(
                f"  {sizes:<14} {what:<18} {rate / 1e6:5.2f}M msgs/s  ratio {ratio:5.3f}  "
                f"(plain file {plain / 1e6:.2f}M/s)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
