"""``samza-nb browse --config-path FILE SYSTEM.STREAM``: a stream of a job printed as ``%samza_browse``
shows it, decoded with the stream's serdes; a bad stream, partition or offset is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.runtime.cli.main import main
from samza_nb.systems.log import DurableLog


@pytest.fixture
def config_path(tmp_path: Path) -> str:
    with DurableLog(tmp_path / "log") as log:
        log.create_stream("events", 2)
        log.send("events", '{"n": 1}', key=b"user-1", partition=0, headers=(("trace", b"abc"),))
        log.send("events", '{"n": 2}', partition=0)
        log.send("events", None, key=b"user-2", partition=0)
        log.send("events", '"x"', key=b"user-1", partition=1)
    path = tmp_path / "job.properties"
    path.write_text(
        "job.name = browsed\ntask.inputs = log.events\ntask.class = builtins.object\n"
        f"systems.log.log.dir = {tmp_path / 'log'}\n"
        "systems.log.samza.msg.serde = json\nsystems.log.samza.key.serde = string\n"
    )
    return str(path)


def printed(capsys: pytest.CaptureFixture[str]) -> list[list[str]]:
    """The lines printed, each split on tabs, the timestamp cut off."""
    return [line.split("\t")[:5] for line in capsys.readouterr().out.splitlines()]


def test_every_partition_decoded(config_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["browse", "--config-path", config_path, "log.events"]) == 0
    assert printed(capsys) == [
        ["partition", "offset", "key", "value", "headers"],
        ["0", "0", "user-1", "{'n': 1}", "trace=abc"],
        ["0", "1", "—", "{'n': 2}", "—"],
        ["0", "2", "user-2", "null", "—"],
        ["1", "0", "user-1", "x", "—"],
    ]


def test_by_key_from_an_offset(config_path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["browse", "--config-path", config_path, "log.events", "--key", "user-1", "-n", "1"]) == 0
    assert printed(capsys)[1:] == [
        ["0", "0", "user-1", "{'n': 1}", "trace=abc"],
        ["1", "0", "user-1", "x", "—"],
        ["# partition 0: more from offset 1 (-n 1 shown)"],
    ]
    assert (
        main(["browse", "--config-path", config_path, "log.events", "--partition", "0", "--from", "3"]) == 0
    )
    assert printed(capsys)[1:] == [
        ["# partition 0: no message at offset 3 yet (log.events#0 has offsets 0..2)"]
    ]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["log.nope"], "log.nope: durable log"),
        (["log.events", "--partition", "2"], "log.events: --partition 2: the stream has partitions 0..1"),
        (["log.events", "--from", "-1"], "log.events: --from -1: "),
    ],
)
def test_bad_arguments_are_one_line_errors(
    config_path: str, capsys: pytest.CaptureFixture[str], args: list[str], error: str
) -> None:
    assert main(["browse", "--config-path", config_path, *args]) == 1
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"samza-nb: error: {error}"), line
