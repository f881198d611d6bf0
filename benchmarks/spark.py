"""Issue 14's Spark benchmarks, each a ratio or a distribution measured in one run (the machine is noisy):

(a) ``spark_bounded.py``: a bounded DataFrame of 1M rows into a pass-through task in one container, as a
    ratio to ``for row in df.toArrow().to_pylist()`` in the same run (target >= 0.8).
(b) ``spark_runner.py --only b``: the Spark runner with 2 containers against 1 container on the same
    4-partition input (target >= 1.6x on 2 cores).
(c) ``spark_runner.py --only c``: time from ``samza-nb run --runner spark`` to the first message processed,
    and the same for the plain runner.
(d) ``spark_stream_latency.py``: a streaming DataFrame from ``rate-micro-batch`` fed through the durable
    log: end-to-end latency from the micro-batch's timestamp to processing, median and p99.

Each runs in its own process (its own SparkSession). Run: ``python benchmarks/spark.py [--only a|b|c|d]``;
the scripts take their own options when run alone.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = {
    "a": ["spark_bounded.py"],
    "b": ["spark_runner.py", "--only", "b"],
    "c": ["spark_runner.py", "--only", "c"],
    "d": ["spark_stream_latency.py"],
}


def main() -> int:
    """Run the chosen parts in turn; the first non-zero exit status, else 0."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--only", choices=sorted(PARTS), action="append", help="a part to run (repeatable)")
    args = parser.parse_args()
    for part in args.only or sorted(PARTS):
        script, *options = PARTS[part]
        print(f"== ({part}) {script} {' '.join(options)}".rstrip(), flush=True)
        status = subprocess.call([sys.executable, str(HERE / script), *options], cwd=HERE.parent)
        if status:
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main())
