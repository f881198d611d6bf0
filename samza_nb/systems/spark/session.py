"""The driver's SparkSession: the active one, or one built from the job's config.

``spark.master`` (default ``local[<containers>,4]``: a slot per container, a task retried up to 4 times) and
``spark.conf.<key> = <value>`` configure a session this module builds; the UI is off unless
``spark.conf.spark.ui.enabled`` says otherwise. An active session (a notebook's, a test's) is used as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.config import Config

MASTER_KEY = "spark.master"
CONF_PREFIX = "spark.conf."


def import_pyspark_sql() -> Any:
    """``pyspark.sql``; a ConfigError saying how to install it when pyspark is missing."""
    try:
        import pyspark.sql as sql
    except ImportError as exc:
        raise ConfigError(
            f"this job needs pyspark ({exc}): install the spark extra, pip install 'samza-nb[spark]'"
        ) from exc
    return sql


def spark_session(config: Config, containers: int = 1) -> Any:
    """The active SparkSession, else a new one built from ``config`` (see the module)."""
    sql = import_pyspark_sql()
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        return active
    master = (config.get_str(MASTER_KEY, "") or "").strip() or f"local[{max(1, containers)},4]"
    builder = sql.SparkSession.builder.master(master).appName(config.job_name())
    builder = builder.config("spark.ui.enabled", "false")
    for key in sorted(config):
        if key.startswith(CONF_PREFIX):
            builder = builder.config(key.removeprefix(CONF_PREFIX), config[key])
    return builder.getOrCreate()


__all__ = ["CONF_PREFIX", "MASTER_KEY", "import_pyspark_sql", "spark_session"]
