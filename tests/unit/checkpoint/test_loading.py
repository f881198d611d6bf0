"""load_checkpoint_manager: the factory named by task.checkpoint.factory, and its errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.checkpoint import (
    Checkpoint,
    CheckpointManager,
    CheckpointManagerFactory,
    DuckDBCheckpointManager,
    DuckDBCheckpointManagerFactory,
    job_database_path,
    load_checkpoint_manager,
)
from samza_nb.config import Config
from samza_nb.errors import ConfigError

KEY = "task.checkpoint.factory"


class NoMethodFactory:
    """Has no get_checkpoint_manager."""


class NeedsArgumentsFactory:
    def __init__(self, required: str) -> None:
        self.required = required


class ReturnsJunkFactory:
    def get_checkpoint_manager(self, config: Config) -> object:
        return object()


class InMemoryFactory:
    """A custom factory: a DuckDB manager on an in-memory database."""

    def get_checkpoint_manager(self, config: Config) -> DuckDBCheckpointManager:
        return DuckDBCheckpointManager(":memory:", "custom", "1")


class Outer:
    class NestedFactory(InMemoryFactory):
        pass


NOT_CALLABLE = 42


def test_default_is_duckdb_on_the_job_file(tmp_path: Path) -> None:
    config = Config({"job.name": "pageviews", "job.id": "7", "job.logged.store.base.dir": str(tmp_path)})
    manager = load_checkpoint_manager(config)
    assert isinstance(manager, DuckDBCheckpointManager)
    assert isinstance(manager, CheckpointManager)
    assert Path(manager.path) == tmp_path / "pageviews-7" / "samza.duckdb"
    assert job_database_path(config) == tmp_path / "pageviews-7" / "samza.duckdb"
    assert (manager.job_name, manager.job_id) == ("pageviews", "7")
    assert not (tmp_path / "pageviews-7").exists()  # nothing is created before start
    assert isinstance(DuckDBCheckpointManagerFactory(), CheckpointManagerFactory)


def test_default_path_uses_config_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = job_database_path(Config())
    assert path == tmp_path / ".samza_nb" / "state" / "samza-nb-job-1" / "samza.duckdb"
    assert path.is_absolute()


async def _use(manager: CheckpointManager) -> Checkpoint | None:
    manager.register("Partition 0")
    await manager.start()
    try:
        return await manager.read_last_checkpoint("Partition 0")
    finally:
        await manager.stop()


def test_custom_factory_is_loaded() -> None:
    import asyncio

    for path in (f"{__name__}.InMemoryFactory", f"{__name__}.Outer.NestedFactory"):
        manager = load_checkpoint_manager(Config({KEY: path}))
        assert isinstance(manager, DuckDBCheckpointManager)
        assert manager.path == ":memory:"
        assert asyncio.run(_use(manager)) is None


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("no_such_package_xyz.Factory", "cannot be imported"),
        ("samza_nb.checkpoint.no_such_module.Factory", "cannot be imported"),
        ("samza_nb.checkpoint.duckdb.NoSuchFactory", "no attribute 'NoSuchFactory'"),
        ("NotDotted", "dotted path"),
        (f"{__name__}.NoMethodFactory", "get_checkpoint_manager"),
        (f"{__name__}.NeedsArgumentsFactory", "no arguments"),
        (f"{__name__}.ReturnsJunkFactory", "CheckpointManager"),
        (f"{__name__}.NOT_CALLABLE", "instantiated"),
    ],
)
def test_bad_factories_are_config_errors_naming_key_and_path(path: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_checkpoint_manager(Config({KEY: path}))
    message = str(info.value)
    assert KEY in message
    assert path in message
    assert why in message
    assert info.value.key == KEY


@pytest.mark.parametrize(("key", "value"), [("job.name", "a/b"), ("job.id", ".."), ("job.name", " ")])
def test_job_identity_must_name_one_directory(tmp_path: Path, key: str, value: str) -> None:
    config = Config({key: value, "job.logged.store.base.dir": str(tmp_path)})
    with pytest.raises(ConfigError) as info:
        load_checkpoint_manager(config)
    assert info.value.key == key
    assert key in str(info.value)
