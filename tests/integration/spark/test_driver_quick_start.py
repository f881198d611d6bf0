"""A SparkSession samza_nb makes starts its driver JVM with C1 only and the class archive when built: the
options reach the JVM (its own input arguments say so), and the job's own options come after them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from samza_nb.systems.spark.jvm_start import C1_ONLY

PROBE = """
import json, sys
from samza_nb.config import Config
from samza_nb.systems.spark.session import spark_session
config = Config(json.loads(sys.argv[1]))
spark = spark_session(config)
bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
print(json.dumps(list(bean.getInputArguments())))
spark.stop()
"""


def jvm_arguments(tmp_path: Path, **config: str) -> list[str]:
    env = dict(os.environ, SAMZA_NB_CACHE_DIR=str(tmp_path / "cache"), PYSPARK_PYTHON=sys.executable)
    values = {"job.name": "quick", "spark.master": "local[1]", **config}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(values)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    arguments: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return arguments


def test_the_driver_jvm_gets_c1_only_and_the_jobs_own_options_last(tmp_path: Path) -> None:
    arguments = jvm_arguments(tmp_path, **{"spark.conf.spark.driver.extraJavaOptions": "-Dsamza.probe=1"})
    assert C1_ONLY in arguments
    assert arguments.index(C1_ONLY) < arguments.index("-Dsamza.probe=1")
    assert not any(a.startswith("-XX:SharedArchiveFile") for a in arguments), "no archive built here"
    off = jvm_arguments(tmp_path, **{"spark.jvm.quick.start": "false"})
    assert C1_ONLY not in off
