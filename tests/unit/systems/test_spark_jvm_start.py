"""The driver JVM's quick-start options (samza_nb.systems.spark.jvm_start): what a session samza_nb makes
passes to its JVM, and where the class archive lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.config import Config
from samza_nb.systems.spark import jvm_start
from samza_nb.systems.spark.jvm_start import (
    C1_ONLY,
    class_archive_path,
    driver_java_options,
    executor_java_options,
)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SAMZA_NB_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_c1_only_without_an_archive_and_the_archive_once_built(cache: Path) -> None:
    config = Config({"job.name": "j"})
    archive = class_archive_path()
    assert archive is not None and archive.parent == cache
    assert driver_java_options(config) == C1_ONLY
    archive.write_bytes(b"built")
    options = (driver_java_options(config) or "").split()
    assert options[0] == C1_ONLY
    assert f"-XX:SharedArchiveFile={archive}" in options and "-Xshare:auto" in options


def test_the_jobs_own_options_come_last_and_the_key_turns_it_off(cache: Path) -> None:
    own = "-Xmx2g -XX:TieredStopAtLevel=4"
    config = Config({"job.name": "j", "spark.conf.spark.driver.extraJavaOptions": own})
    assert (driver_java_options(config) or "").endswith(own)  # HotSpot: the last occurrence wins
    off = Config({"job.name": "j", "spark.jvm.quick.start": "false"})
    assert driver_java_options(off) is None and executor_java_options(off) is None


def test_executors_get_c1_only_and_never_the_drivers_archive(cache: Path) -> None:
    archive = class_archive_path()
    assert archive is not None
    archive.write_bytes(b"built")
    own = Config({"job.name": "j", "spark.conf.spark.executor.extraJavaOptions": "-Dx=1"})
    assert executor_java_options(own) == f"{C1_ONLY} -Dx=1"


def test_another_pyspark_installation_gets_another_archive(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The key names the jars' directory (the JVM's classpath): a second venv never maps the first's."""
    import pyspark

    first = class_archive_path()
    other = tmp_path / "other" / "pyspark"
    (other / "jars").mkdir(parents=True)
    monkeypatch.setattr(pyspark, "__file__", str(other / "__init__.py"))
    second = class_archive_path()
    assert first is not None and second is not None and first != second
    assert jvm_start.installation_key() == second.name.removeprefix("spark-driver-").removesuffix(".jsa")


def test_archives_of_installations_that_are_gone_are_pruned(cache: Path, tmp_path: Path) -> None:
    """Every fresh venv builds its own archive (~180 MiB): those whose jars directory is gone go."""
    from samza_nb.systems.spark.jvm_start import prune_class_archives

    mine = class_archive_path()
    assert mine is not None
    mine.write_bytes(b"this installation's")
    gone, alive, unrecorded = (cache / f"spark-driver-{name}.jsa" for name in ("gone", "alive", "old"))
    for archive in (gone, alive, unrecorded):
        archive.write_bytes(b"x")
    gone.with_suffix(".jars").write_text(str(tmp_path / "deleted-venv" / "jars"))
    (tmp_path / "venv" / "jars").mkdir(parents=True)
    alive.with_suffix(".jars").write_text(str(tmp_path / "venv" / "jars"))
    assert sorted(prune_class_archives()) == sorted([gone, unrecorded])
    assert mine.exists() and alive.exists() and not gone.exists() and not gone.with_suffix(".jars").exists()
