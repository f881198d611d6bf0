"""Bad configuration of bounded Spark inputs: one-line errors naming the key (or the stream)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import ConfigError, SamzaError
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.factory import SparkSystemAdmin
from samza_nb.systems.spark.settings import READ_ONLY_INPUTS_ENV
from tests.integration.spark.bounded_support import job_config, no_registrations

__all__ = ["no_registrations"]

PREFIX = "systems.spark.streams.clicks.spark"


def metadata(base: Path, **config: Any) -> Any:
    admin = SparkSystemAdmin("spark", job_config(base, **config))
    return asyncio.run(admin.get_metadata(["clicks"]))


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "in").mkdir()
    table = pa.table({"user": ["a", "b"], "label": ["x", "y"]})
    pq.write_table(table, tmp_path / "in" / "0.parquet")
    return tmp_path / "in"


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"key": "nope"}, f"{PREFIX}.key"),
        ({"value": "nope"}, f"{PREFIX}.value"),
        ({"timestamp": "label"}, f"{PREFIX}.timestamp"),
        ({"format": "xls"}, f"{PREFIX}.format"),
        ({"partitions": "0", "key": "user"}, f"{PREFIX}.partitions"),
        ({"partitions": "2"}, f"{PREFIX}.partitions"),
        ({"path": "/does/not/exist"}, f"{PREFIX}.path"),
    ],
)
def test_bad_config_is_a_one_line_error_naming_the_key(
    tmp_path: Path, files: Path, extra: dict[str, str], key: str
) -> None:
    config = {f"{PREFIX}.path": str(files)} | {f"{PREFIX}.{name}": value for name, value in extra.items()}
    with pytest.raises(ConfigError) as failure:
        metadata(tmp_path / "state", **config)
    assert key in str(failure.value)
    assert "\n" not in str(failure.value)


def test_a_missing_column_of_a_spark_read_names_the_key(spark: Any, tmp_path: Path, files: Path) -> None:
    config = {f"{PREFIX}.path": str(files), f"{PREFIX}.partitions": "2", f"{PREFIX}.key": "nope"}
    with pytest.raises(ConfigError, match=f"{PREFIX}.key = 'nope'"):
        metadata(tmp_path / "state", **config)


def test_a_timestamp_of_the_wrong_type_in_a_registered_frame_names_the_argument(
    spark: Any, tmp_path: Path
) -> None:
    register_dataframe(
        "clicks", spark.createDataFrame([("a", "x")], "user string, ts string"), timestamp="ts"
    )
    with pytest.raises(ConfigError, match=r"register_dataframe\('clicks', timestamp=...\) = 'ts'.*string"):
        metadata(tmp_path)


def test_a_stream_neither_registered_nor_configured_nor_written_names_the_stream(tmp_path: Path) -> None:
    with pytest.raises(SamzaError, match=r"spark\.clicks has not been written.*register_dataframe"):
        metadata(tmp_path)


def test_a_container_of_the_spark_runner_never_writes_an_input_it_does_not_see(
    tmp_path: Path, files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READ_ONLY_INPUTS_ENV, "1")  # what the Spark runner's task gives its container
    shared = tmp_path / "not-shared"
    extra = {f"{PREFIX}.path": str(files), f"{PREFIX}.key": "user", f"{PREFIX}.partitions": "2"}
    with pytest.raises(ConfigError) as caught:
        metadata(tmp_path, **{"job.shared.dir": str(shared)}, **extra)
    text = str(caught.value)
    assert (
        "\n" not in text and "job.shared.dir" in text and str(shared) in text and socket.gethostname() in text
    )
    assert not shared.exists() or not any(shared.rglob("*.parquet")), "nothing written by the container"
