"""Where a Spark-run job's files and streams may live when its executors are other machines (a master that
is not ``local[...]``): checked on the driver before anything starts, each problem one ConfigError naming
the key to set.

Executors do not share the driver's disk. So under a cluster master:

- a job with a Spark system (written inputs, fed streams, the sink's outputs) needs ``job.shared.dir``, a
  directory every executor reaches at the same path;
- checkpoints, changelogs, the coordinator stream and every stream the containers read or write must not
  be on the embedded durable log or in DuckDB checkpoint files (single-machine defaults): Kafka holds them;
- every store has a changelog (a store kept only on a worker's disk is lost with the worker).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from samza_nb.checkpoint.base import (
    CHECKPOINT_FACTORY_KEY,
    DEFAULT_CHECKPOINT_FACTORY,
    MULTI_CONTAINER_CHECKPOINT_FACTORY,
    checkpoint_factory_path,
)
from samza_nb.config.catalogue import default_of
from samza_nb.config.stores import changelog_stream, configured_store_names, store_key
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM
from samza_nb.container.inputs import input_streams
from samza_nb.coordinator.stream_store import COORDINATOR_SYSTEM_KEY, coordinator_system
from samza_nb.errors import ConfigError
from samza_nb.runtime.spark.cluster import is_local_master
from samza_nb.systems.spark.settings import BASE_DIR_KEY, SHARED_DIR_KEY

if TYPE_CHECKING:
    from samza_nb.config import Config

SPARK_FACTORY: Final = "samza_nb.systems.spark.SparkSystemFactory"
LOG_FACTORY: Final = "samza_nb.systems.log.LogSystemFactory"
KAFKA_CHECKPOINTS: Final = "samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory"


def check_cluster_placement(config: Config, master: str) -> None:
    """Nothing under a local master; else the first problem of the module's list, as a ConfigError naming
    the key."""
    if is_local_master(master):
        return
    where = f"under the cluster master {master} executors do not see the driver's disk"
    if _systems_with(config, SPARK_FACTORY) and not (config.get_str(SHARED_DIR_KEY) or "").strip():
        raise ConfigError(
            f"{SHARED_DIR_KEY} is not set: {where}; set it to a directory the driver and every executor "
            "reach at the same path (a shared mount), where the Spark system's inputs and outputs go",
            key=SHARED_DIR_KEY,
        )
    checkpoints = checkpoint_factory_path(config)
    if checkpoints in (DEFAULT_CHECKPOINT_FACTORY, MULTI_CONTAINER_CHECKPOINT_FACTORY):
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY} = {checkpoints}: {where}; keep checkpoints on Kafka "
            f"({CHECKPOINT_FACTORY_KEY} = {KAFKA_CHECKPOINTS}, task.checkpoint.system = <a Kafka system>)",
            key=CHECKPOINT_FACTORY_KEY,
        )
    logs = _log_systems(config)
    for store in configured_store_names(config):
        changelog = changelog_stream(config, store)
        if changelog is None:
            key = store_key(store, "changelog")
            raise ConfigError(
                f"store {store} has no changelog: {where}, and a container may be restarted on another "
                f"one, where a store kept only on a worker's disk starts empty; set {key} = <Kafka system>."
                "<topic>",
                key=key,
            )
        if changelog.system in logs:
            key = store_key(store, "changelog")
            raise ConfigError(
                f"{key}: the changelog {changelog.system}.{changelog.stream} is on the embedded durable log; "
                f"{where}: put it on a Kafka system (or set job.default.system / job.changelog.system)",
                key=key,
            )
    for stream in input_streams(config):
        if stream.system in logs:
            raise ConfigError(
                f"task.inputs: {stream.system}.{stream.stream} is on the embedded durable log; {where}: "
                "read it from a Kafka system",
                key="task.inputs",
            )
    if coordinator_system(config) in logs:
        raise ConfigError(
            f"{COORDINATOR_SYSTEM_KEY}: the coordinator stream is on the embedded durable log "
            f"({coordinator_system(config)}); a new driver on another machine would not find it: set "
            f"{COORDINATOR_SYSTEM_KEY} (or job.default.system) to a Kafka system",
            key=COORDINATOR_SYSTEM_KEY,
        )


def with_absolute_base_dir(config: Config) -> Config:
    """``config`` with a relative ``job.logged.store.base.dir`` (the default ``./.samza_nb/state`` too) made
    absolute against the driver's working directory: a container on an executor then keeps its state
    there on its own disk, not in the executor's temporary working directory that Spark deletes."""
    raw = (config.get_str(BASE_DIR_KEY) or "").strip() or (default_of(BASE_DIR_KEY) or ".")
    path = Path(raw).expanduser()
    if path.is_absolute() and BASE_DIR_KEY in config:
        return config
    return config.with_overrides({BASE_DIR_KEY: str(path.absolute())})


def _systems_with(config: Config, factory: str) -> set[str]:
    """The systems whose ``systems.<s>.samza.factory`` is ``factory``."""
    return {
        key.removeprefix("systems.").removesuffix(".samza.factory")
        for key, value in config.items()
        if key.startswith("systems.") and key.endswith(".samza.factory") and value.strip() == factory
    }


def _log_systems(config: Config) -> set[str]:
    """The systems that are the embedded durable log (``log`` unless configured as something else)."""
    found = _systems_with(config, LOG_FACTORY)
    if not (config.get_str(f"systems.{DEFAULT_LOG_SYSTEM}.samza.factory") or "").strip():
        found.add(DEFAULT_LOG_SYSTEM)
    return found


__all__ = ["check_cluster_placement", "with_absolute_base_dir"]
