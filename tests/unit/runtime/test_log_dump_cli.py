"""``samza-nb log-dump DIR STREAM``: a durable log stream printed for people."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.runtime.cli.main import main
from samza_nb.systems.log import DurableLog


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    with DurableLog(tmp_path) as log:
        log.create_stream("events", 2)
        log.send("events", b"hello", key=b"user-1", partition=0)
        log.send("events", "héllo wörld", partition=0)
        log.send("events", None, key=b"user-2", partition=0)
        log.send("events", b"\xff\x00\x01", key=b"line\nbreak", partition=1)
    return tmp_path


def test_every_partition_is_printed_readably(directory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log-dump", str(directory), "events"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "0 0 user-1 hello",
        "0 1 - héllo wörld",
        "0 2 user-2 (tombstone)",
        "1 0 'line\\nbreak' 0xff0001",
    ]


def test_one_partition_from_an_offset(directory: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log-dump", str(directory), "events", "--partition", "0", "--from", "1"]) == 0
    assert capsys.readouterr().out.splitlines() == ["0 1 - héllo wörld", "0 2 user-2 (tombstone)"]


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["nope"], "has no stream 'nope' (streams: events)"),
        (["events", "--partition", "2"], "--partition 2: stream 'events' has partitions 0..1"),
        (["events", "--from", "-1"], "--from -1: offsets are 0, 1, ..."),
    ],
)
def test_bad_arguments_are_one_line_errors(
    directory: Path, capsys: pytest.CaptureFixture[str], args: list[str], error: str
) -> None:
    assert main(["log-dump", str(directory), *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("samza-nb: error: ") and error in err and len(err.splitlines()) == 1


def test_a_missing_directory_is_an_error_and_is_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["log-dump", str(tmp_path / "none"), "s"]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert not (tmp_path / "none").exists()


def test_headers_follow_the_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with DurableLog(tmp_path) as log:
        log.create_stream("s", 1)
        log.send("s", b"v", key=b"k", headers=[("trace", b"abc"), ("bin", b"\xff\x01"), ("null", None)])
        log.send("s", b"w")
    assert main(["log-dump", str(tmp_path), "s"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "0 0 k v headers: trace=abc bin=0xff01 null=(null)",
        "0 1 - w",
    ]
