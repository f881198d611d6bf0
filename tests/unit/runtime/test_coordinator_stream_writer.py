"""``samza-nb coordinator-stream-writer`` through ``runtime.cli.main`` on the in-memory system (the Kafka
case is in tests/integration/kafka/test_coordinator_stream.py)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from samza_nb import SystemStreamPartition
from samza_nb.coordinator import coordinator_stream_name
from samza_nb.runtime.cli.main import main
from samza_nb.systems.inmemory.system import InMemoryBroker


@pytest.fixture
def job(tmp_path: Path) -> tuple[Path, InMemoryBroker]:
    namespace = f"writer-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "job.properties"
    path.write_text(
        "job.name = clicks\n"
        "job.coordinator.system = mem\n"
        "systems.mem.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
        f"systems.mem.inmemory.namespace = {namespace}\n"
    )
    return path, InMemoryBroker.named(namespace, "mem")


STREAM = coordinator_stream_name("clicks")
SSP = SystemStreamPartition("mem", STREAM, 0)


def test_writes_one_set_config_message(
    job: tuple[Path, InMemoryBroker], capsys: pytest.CaptureFixture[str]
) -> None:
    path, broker = job
    write = ["coordinator-stream-writer", "--type", "set-config"]
    assert main([*write, "--config-path", str(path), "--key", "job.container.count", "--value", "8"]) == 0
    assert main([*write, "--config-path", f"file://{path}", "--key", "k", "--value", ""]) == 0
    assert "wrote set-config job.container.count = 8 to coordinator stream mem." in capsys.readouterr().out
    envelopes, _ = broker.envelopes(SSP, 0)
    assert [json.loads(e.key) for e in envelopes] == [
        [1, "set-config", "job.container.count"],
        [1, "set-config", "k"],
    ]
    value = json.loads(envelopes[0].message)
    assert value["source"] == "coordinator-stream-writer"
    assert value["values"] == {"value": "8"}
    assert set(value) == {"host", "username", "source", "timestamp", "values"}


def test_other_types_are_refused_and_nothing_is_sent(
    job: tuple[Path, InMemoryBroker], capsys: pytest.CaptureFixture[str]
) -> None:
    path, broker = job
    for kind in ("set-changelog", "invalid-type"):
        argv = [
            "coordinator-stream-writer",
            "--config-path",
            str(path),
            "--type",
            kind,
            "--key",
            "k",
            "--value",
            "v",
        ]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"--type '{kind}' is not supported" in err and "only writes set-config" in err
    assert not broker.has_stream(STREAM)


def test_missing_key_or_value_and_bad_config_are_usage_errors(
    job: tuple[Path, InMemoryBroker], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, broker = job
    base = ["coordinator-stream-writer", "--type", "set-config"]
    assert main([*base, "--config-path", str(path), "--key", "k"]) == 2
    assert "needs --key and --value" in capsys.readouterr().err
    assert (
        main([*base, "--config-path", str(tmp_path / "nope.properties"), "--key", "k", "--value", "v"]) == 2
    )
    assert "does not exist" in capsys.readouterr().err
    unknown = tmp_path / "unknown.properties"
    unknown.write_text("job.coordinator.system = nowhere\n")
    assert main([*base, "--config-path", str(unknown), "--key", "k", "--value", "v"]) == 2
    assert "systems.nowhere.samza.factory" in capsys.readouterr().err
    assert not broker.has_stream(STREAM)
