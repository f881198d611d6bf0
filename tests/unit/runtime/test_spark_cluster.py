"""How the Spark runner's containers reach the coordinator under a cluster master (no Spark needed)."""

from __future__ import annotations

from typing import Any

from samza_nb import Config
from samza_nb.runtime.spark.cluster import HOST_KEY, container_url, coordinator_reach, is_local_master


class Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


class Context:
    """What the functions read of a SparkContext: its master and its conf."""

    def __init__(self, master: str, driver_host: str | None = "10.1.2.3") -> None:
        self.master = master
        self.conf = Conf({"spark.driver.host": driver_host} if driver_host else {})

    def getConf(self) -> Conf:
        return self.conf


def job(**extra: str) -> Config:
    return Config({"job.name": "j", "task.class": "t.T", "task.inputs": "s.x", **extra})


def test_local_masters_and_cluster_masters() -> None:
    assert all(is_local_master(m) for m in ("local", "local[2]", "local[2,4]", "local[*]"))
    assert not any(is_local_master(m) for m in ("spark://h:7077", "yarn", "local-cluster[2,1,512]"))


def test_under_a_local_master_nothing_changes() -> None:
    config = job()
    assert coordinator_reach(config, Context("local[2,2]")) == (config, None)


def test_under_a_cluster_master_the_coordinator_binds_the_driver_host_with_a_token() -> None:
    config, token = coordinator_reach(job(), Context("spark://m:7077"))
    assert config[HOST_KEY] == "10.1.2.3"
    assert token is not None and len(token) >= 32
    assert coordinator_reach(job(), Context("spark://m:7077"))[1] != token, "a token per start"


def test_a_configured_host_wins_over_the_driver_host() -> None:
    config, token = coordinator_reach(job(**{HOST_KEY: "0.0.0.0"}), Context("yarn"))
    assert config[HOST_KEY] == "0.0.0.0" and token is not None


def test_a_wildcard_bind_address_becomes_the_driver_host_in_the_containers_url() -> None:
    assert container_url("http://0.0.0.0:4040", Context("yarn")) == "http://10.1.2.3:4040"
    assert container_url("http://[::]:4040", Context("yarn", "fe80::1")) == "http://[fe80::1]:4040"
    assert container_url("http://0.0.0.0:4040", Context("yarn", None)) == "http://127.0.0.1:4040"
    assert container_url("http://10.0.0.5:4040", Context("yarn")) == "http://10.0.0.5:4040"
    assert container_url("http://driver.example:4040", Context("yarn")) == "http://driver.example:4040"
