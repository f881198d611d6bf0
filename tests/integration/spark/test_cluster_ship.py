"""The job's code on the standalone cluster (``spark_cluster``), whose workers see only the shared directory:
a task package of two modules beside the config is zipped and shipped as ``--py-files`` does; a packed
environment (venv-pack) handed to Spark with ``spark.archives`` runs the containers with its Python and
brings the task's package."""

from __future__ import annotations

import collections
import os
import site
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.spark.cluster import SparkCluster
from tests.integration.spark.test_cluster import (
    CLI,
    MESSAGES,
    PARTITIONS,
    ROOT,
    cluster_job,
    finish,
    produce,
    recorded,
    start_driver,
)

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(300)]

PACKAGE_TASK = '''
import os
import sys

from tests.integration.spark.runner_tasks import RecordUntilEnd

from {package}.helpers import shout


class Shouted(RecordUntilEnd):
    """Records each message as the helper module of its package turns it, with the directory its Python
    lives in (``<message>@<directory>``)."""

    def process(self, envelope, collector, coordinator):
        text = envelope.message.decode()
        if text == "end":
            super().process(envelope, collector, coordinator)
            return
        where = os.path.basename(os.path.dirname(os.path.dirname(sys.executable)))
        self.record.write(f"{{self.task}} {{os.getpid()}} {{envelope.offset}} {{shout(text)}}@{{where}}\\n")
        self.record.flush()
'''


def write_package(parent: Path, prefix: str) -> str:
    """A package of two modules in ``parent`` (the task imports the helper); its name."""
    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    package = parent / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helpers.py").write_text("def shout(text):\n    return text.upper() + '!'\n")
    (package / "task.py").write_text(PACKAGE_TASK.format(package=name))
    return name


def shouted(where: str) -> collections.Counter[str]:
    return collections.Counter({f"M{i}!@{where}": PARTITIONS for i in range(MESSAGES)})


def test_a_task_package_of_two_modules_is_shipped_to_the_executors(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    package = write_package(tmp_path, "pipeline")  # the workers do not see tmp_path
    config, record = cluster_job(
        spark_cluster, cluster_kafka, tmp_path, **{"task.class": f"{package}.task.Shouted"}
    )
    produce(cluster_kafka, config["job.name"], [f"m{i}" for i in range(MESSAGES)] + ["end"])
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 0, err[-4000:]
    messages = collections.Counter(m.rpartition("@")[0] for m in recorded(record).elements())
    assert messages == collections.Counter({f"M{i}!": PARTITIONS for i in range(MESSAGES)})
    assert spark_cluster.containers() == []
    shipped = list((tmp_path / "state" / f"{config['job.name']}-1" / "py-files").iterdir())
    assert [p.name.rpartition("-")[0] for p in shipped] == [package], shipped


def packed_environment(tmp_path: Path) -> tuple[Path, str]:
    """A venv holding a task package, packed with venv-pack; (the archive, the package's name). The venv
    reaches samza_nb and its dependencies through this run's site-packages (a ``.pth``), which the
    workers see at the same path."""
    env = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    (packages,) = env.glob("lib/python3*/site-packages")
    name = write_package(packages, "packed")
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (packages / "samza_nb_test_run.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in ours)
    )
    archive = tmp_path / "env.tar.gz"
    subprocess.run(
        [str(Path(sys.executable).parent / "venv-pack"), "-p", str(env), "-o", str(archive), "-q"],
        check=True,
    )
    return archive, name


def test_a_packed_environment_in_spark_archives_runs_the_containers_with_its_python(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    archive, package = packed_environment(tmp_path)  # on the driver's private disk
    config, record = cluster_job(
        spark_cluster,
        cluster_kafka,
        tmp_path,
        **{
            "task.class": f"{package}.task.Shouted",
            "spark.conf.spark.archives": f"{archive}#environment",
            "spark.ship.code": "false",
        },
    )
    produce(cluster_kafka, config["job.name"], [f"m{i}" for i in range(MESSAGES)] + ["end"])
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    (packages,) = (tmp_path / "env").glob("lib/python3*/site-packages")
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join([str(ROOT), str(packages)]),  # the driver imports the task class too
        SPARK_LOCAL_IP="127.0.0.1",
        PYSPARK_PYTHON="./environment/bin/python",
    )
    driver = subprocess.Popen(
        [*CLI, "--config-path", "job.properties"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    status, _, err = finish(driver, spark_cluster)
    assert status == 0, err[-4000:]
    assert recorded(record) == shouted("environment")
    assert spark_cluster.containers() == []
    assert not (tmp_path / "state" / f"{config['job.name']}-1" / "py-files").exists()
