"""The driver's claim on its job (coordinator/driver_claim.py): a live claim refuses a second driver in one
line; a released, dead (this host) or expired (another host) claim is taken over; of two drivers racing for
one epoch the first written wins; a newer epoch fences the older driver at its next renewal."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time

import pytest

from samza_nb import Config
from samza_nb.coordinator.driver_claim import DriverClaim, DriverLease
from samza_nb.errors import JobRunningError

from .memory_store import MemoryStore

CONFIG = Config({"job.name": "once", "job.id": "7", "job.driver.lease.ms": "3000"})


def foreign(epoch: int, *, host: str = "elsewhere", pid: int = 4242, age_ms: int = 0) -> DriverClaim:
    """A claim of another driver, renewed ``age_ms`` ago."""
    now = time.time_ns() // 1_000_000
    return DriverClaim(epoch, f"owner-{epoch}-{pid}", host, pid, now - 60_000, now - age_ms)


def owner(store: MemoryStore) -> str | None:
    claim = store.driver()
    return claim.owner if claim is not None else None


def with_claim(claim: DriverClaim) -> MemoryStore:
    message = claim.message()
    return MemoryStore([type(message)(**{**message.__dict__, "timestamp": claim.seen_ms})])


def test_a_live_claim_refuses_the_second_driver_in_one_line_naming_it() -> None:
    store = with_claim(foreign(3))
    with pytest.raises(JobRunningError) as refused:
        asyncio.run(DriverLease(store, CONFIG).claim())
    line = str(refused.value)
    assert "\n" not in line
    assert line.startswith(
        "job once (job.id 7) is already running: its driver is process 4242 on host elsewhere"
    )
    assert "epoch 3" in line and "another job.id" in line


def test_two_drivers_in_one_process_the_second_is_refused_until_the_first_releases() -> None:
    store = MemoryStore()

    async def go() -> None:
        first = DriverLease(store, CONFIG)
        await first.claim()
        with pytest.raises(JobRunningError, match=f"process {os.getpid()} on host {socket.gethostname()}"):
            await DriverLease(store, CONFIG).claim()
        await first.release()
        again = DriverLease(store, CONFIG)
        await again.claim()
        assert again.mine is not None and again.mine.epoch == 2

    asyncio.run(go())


def test_an_expired_claim_of_another_host_is_taken_over_saying_why(caplog: pytest.LogCaptureFixture) -> None:
    store = with_claim(foreign(3, age_ms=10_000))
    lease = DriverLease(store, CONFIG)
    with caplog.at_level(logging.WARNING):
        asyncio.run(lease.claim())
    assert lease.mine is not None and lease.mine.epoch == 4
    assert "taking over from the driver process 4242 on host elsewhere" in caplog.text
    assert "it was not renewed for 10.0 s (longer than job.driver.lease.ms = 3000)" in caplog.text


def test_a_claim_of_a_dead_process_on_this_host_is_taken_over_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    store = with_claim(foreign(1, host=socket.gethostname(), pid=dead))
    with caplog.at_level(logging.WARNING):
        asyncio.run(DriverLease(store, CONFIG).claim())
    assert f"its process {dead} is gone from this host" in caplog.text


def test_of_two_claims_of_one_epoch_the_first_written_wins_and_a_newer_epoch_fences() -> None:
    store = MemoryStore()

    async def go() -> None:
        first = DriverLease(store, CONFIG)
        await first.claim()
        racer = foreign(2, host="elsewhere")  # a driver that took over (epoch 2)
        await store.send([racer.message()])
        assert owner(store) == racer.owner
        late = foreign(2, host="third", pid=7)
        await store.send([late.message()])  # the same epoch, written second: counts for nothing
        assert owner(store) == racer.owner
        fenced = await first.renew()
        assert fenced is not None and "was fenced: the driver process 4242 on host elsewhere" in fenced
        await store.send([first.mine.message()] if first.mine else [])  # a fenced driver's renewal: nothing
        assert owner(store) == racer.owner

    asyncio.run(go())
