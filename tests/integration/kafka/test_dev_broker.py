"""The dev broker: DevBroker and the ``samza-nb dev-broker`` command."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys

import pytest

from samza_nb.runtime.dev_broker import DevBroker, DevBrokerError, port_accepts
from tests.eventually import eventually

from .helpers import create_topic, produce, read_topic


def dev_broker_command(*args: str) -> list[str]:
    """The command line of ``samza-nb dev-broker ARGS``."""
    return [sys.executable, "-m", "samza_nb", "dev-broker", *args]


def test_dev_broker_command_prints_its_address_serves_kafka_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        dev_broker_command("--port", "0"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        match = re.fullmatch(r"bootstrap servers: (127\.0\.0\.1):(\d+)\n", line)
        assert match, line
        bootstrap = f"{match[1]}:{match[2]}"
        assert "systems.kafka.bootstrap.servers = " + bootstrap in process.stdout.readline()

        async def use() -> dict[int, list[tuple[object, object]]]:
            await create_topic(bootstrap, "notebook", 1)
            await produce(bootstrap, "notebook", [b"hello"])
            return await read_topic(bootstrap, "notebook", 1)

        assert asyncio.run(use()) == {0: [(None, b"hello")]}
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert "stopping the dev broker" in stderr
    eventually(
        lambda: not port_accepts(match[1], int(match[2])),
        timeout=10,
        message="the broker still listens after the command ended",
    )


def test_a_busy_port_is_a_clear_error(kafka_broker: DevBroker) -> None:
    result = subprocess.run(
        dev_broker_command("--port", str(kafka_broker.port)), capture_output=True, text=True, timeout=30
    )
    assert result.returncode == 1
    assert f"127.0.0.1:{kafka_broker.port} is already in use" in result.stderr


def test_dev_broker_lifecycle() -> None:
    broker = DevBroker()
    with broker:
        assert broker.is_running() and broker.pid is not None
        assert port_accepts(broker.host, broker.port)
        pid = broker.pid
        with pytest.raises(DevBrokerError, match="already running"):
            broker.start()
    assert not broker.is_running()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
