"""A job runs once: its driver holds a claim on its coordinator stream (docs/concepts/guarantees.md).

Every driver of a job (the Spark runner, ``samza-nb run``, the multi-process runner, the notebook's
``%samza_run``) starts through the job coordinator, which claims the job before it writes anything: a
``set-job-driver`` message (key ``driver``) with the driver's ``host``, ``pid``, ``since`` (ms), an
``epoch`` and an ``owner`` id of this claim. The claim lives where the job's shared state lives (the
coordinator stream: Kafka under a cluster master, the embedded durable log in the job's directory on one
machine), so every driver that could run the job sees it.

- The driver renews its claim every third of ``job.driver.lease.ms`` (the same message again, with a new
  timestamp) and releases it when it stops (``released``).
- A second driver finds a live claim and is refused in one line naming the running driver
  (:class:`~samza_nb.errors.JobRunningError`). A claim is stale (taken over, with a warning line saying why)
  when it was released, when its process is gone on this host (a driver killed with -9), or when it was not
  renewed within the lease (a driver on another host that died).
- Claims are ordered by the stream (one partition): a claim counts only when its epoch is higher than the
  current claim's, so of two drivers racing for epoch n the first written wins and the other, reading the
  stream back after writing, is refused. A newer epoch fences the older claim's driver: on its next renewal it
  finds itself replaced and its containers stop without committing (:attr:`DriverLease.fenced`).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Protocol

from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.errors import JobRunningError, SamzaError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.config import Config

log = logging.getLogger(__name__)

DRIVER_CLAIM: Final[str] = "set-job-driver"
"""The coordinator stream message type of a driver's claim (key :data:`CLAIM_KEY`)."""
CLAIM_KEY: Final[str] = "driver"
LEASE_KEY: Final[str] = "job.driver.lease.ms"
SOURCE: Final[str] = "job-driver"

_held: set[str] = set()
"""Owner ids of the claims this process holds now (a claim with this pid that is not here is stale)."""


@dataclass(frozen=True)
class DriverClaim:
    """One driver's claim as the stream holds it; ``seen_ms``: the timestamp of its last message."""

    epoch: int
    owner: str
    host: str
    pid: int
    since_ms: int
    seen_ms: int
    released: bool = False

    @classmethod
    def of(cls, message: CoordinatorStreamMessage) -> DriverClaim | None:
        """The claim ``message`` holds; None for a delete or a malformed one (which counts for nothing)."""
        values = message.values
        if values is None:
            return None
        try:
            return cls(
                int(values["epoch"]),
                str(values["owner"]),
                str(values["host"]),
                int(values["pid"]),
                int(values["since"]),
                message.timestamp,
                values.get("state") == "released",
            )
        except (KeyError, TypeError, ValueError):
            return None

    def message(self, *, released: bool = False) -> CoordinatorStreamMessage:
        """The message that writes (or renews, or with ``released`` releases) this claim now."""
        values = {
            "epoch": self.epoch,
            "owner": self.owner,
            "host": self.host,
            "pid": self.pid,
            "since": self.since_ms,
            "state": "released" if released else "running",
        }
        return CoordinatorStreamMessage.create(DRIVER_CLAIM, CLAIM_KEY, values, SOURCE)

    def describe(self) -> str:
        """``process P on host H since <UTC time>`` (what a refusal names)."""
        since = datetime.datetime.fromtimestamp(self.since_ms / 1000, datetime.UTC)
        return f"process {self.pid} on host {self.host} since {since:%Y-%m-%d %H:%M:%S} UTC"


class DriverClaims:
    """The fold of a stream's claim messages, read in order: :attr:`current` is the claim in force."""

    def __init__(self) -> None:
        self.current: DriverClaim | None = None

    def apply(self, message: CoordinatorStreamMessage) -> None:
        """Take the next claim message: a higher epoch replaces the current claim; the current claim's own
        messages renew or release it; anything else (a claim that lost a race, a fenced driver's renewal)
        counts for nothing."""
        claim = DriverClaim.of(message)
        current = self.current
        if claim is None:
            return
        if current is None or claim.epoch > current.epoch:
            self.current = claim  # a newer claim (a driver's start or takeover)
        elif claim.epoch == current.epoch and claim.owner == current.owner and not current.released:
            self.current = claim  # its renewal or release


def stale(claim: DriverClaim, lease_ms: int, now_ms: int | None = None) -> str | None:
    """Why ``claim`` no longer holds the job (it was released, its process is gone on this host, its lease
    ran out), or None while it does."""
    if claim.released:
        return "it was released"
    if claim.host == socket.gethostname():
        if claim.pid == os.getpid():
            if claim.owner not in _held:
                return f"this process ({claim.pid}) no longer runs it"
            return None
        if not _same_process(claim.pid, claim.since_ms):
            return f"its process {claim.pid} is gone from this host"
    age = (time.time_ns() // 1_000_000 if now_ms is None else now_ms) - claim.seen_ms
    if age > lease_ms:
        return f"it was not renewed for {age / 1000:.1f} s (longer than {LEASE_KEY} = {lease_ms})"
    return None


class ClaimStore(Protocol):
    """What a claim needs of the coordinator stream (CoordinatorStreamStore is the real one)."""

    async def catch_up(self) -> None:
        """Read what was written since."""
        ...

    def driver(self) -> DriverClaim | None:
        """The claim in force (:class:`DriverClaims`)."""
        ...

    async def send(self, messages: Sequence[CoordinatorStreamMessage]) -> None:
        """Append ``messages``; durable when it returns."""
        ...


class DriverLease:
    """This driver's claim on a job (see the module): :meth:`claim` takes it, :meth:`renew` keeps it,
    :meth:`release` ends it; :attr:`fenced` says (in one line) that a newer driver took the job over."""

    def __init__(self, store: ClaimStore, config: Config) -> None:
        self._store = store
        self.job = f"job {config.job_name()} (job.id {config.job_id()})"
        self.lease_ms: int = config.value(LEASE_KEY)
        self.mine: DriverClaim | None = None
        self.fenced: str | None = None

    async def claim(self) -> None:
        """Take the job (the store was read to its end): JobRunningError naming the running driver when
        another one holds a live claim, also when another driver won the race for the same epoch."""
        current = self._store.driver()
        if current is not None:
            why = stale(current, self.lease_ms)
            if why is None:
                raise self._refusal(current)
            if not current.released:
                log.warning(
                    "%s: taking over from the driver %s (epoch %d): %s",
                    self.job,
                    current.describe(),
                    current.epoch,
                    why,
                )
        now = time.time_ns() // 1_000_000
        mine = DriverClaim(
            (current.epoch if current is not None else 0) + 1,
            uuid.uuid4().hex,
            socket.gethostname(),
            os.getpid(),
            now,
            now,
        )
        _held.add(mine.owner)
        try:
            await self._store.send([mine.message()])
            await self._store.catch_up()
        except BaseException:
            _held.discard(mine.owner)
            raise
        winner = self._store.driver()
        if winner is None or winner.owner != mine.owner:
            _held.discard(mine.owner)
            raise self._refusal(winner or mine)
        self.mine = mine

    async def renew(self) -> str | None:
        """Renew the claim and read the stream back; :attr:`fenced` (also returned) once another driver's
        newer claim replaced this one (this driver must then stop its containers without committing)."""
        mine = self.mine
        if mine is None or self.fenced is not None:
            return self.fenced
        await self._store.send([mine.message()])
        await self._store.catch_up()
        current = self._store.driver()
        if current is not None and current.owner != mine.owner:
            self.fenced = (
                f"{self.job}: this driver (epoch {mine.epoch}) was fenced: the driver {current.describe()} "
                f"took the job over (epoch {current.epoch}); its containers stop without committing"
            )
            _held.discard(mine.owner)
        return self.fenced

    async def keep(self) -> None:
        """Renew the claim every third of the lease until fenced: by a newer driver, or by itself when
        renewing failed for half the lease (before any other driver may take the job over)."""
        loop = asyncio.get_running_loop()
        renewed = loop.time()
        while self.fenced is None:
            await asyncio.sleep(self.lease_ms / 3000)
            try:
                fenced = await self.renew()
            except SamzaError as exc:
                silent = loop.time() - renewed
                log.warning("%s: renewing the driver's claim failed: %s", self.job, exc)
                if silent * 1000 > self.lease_ms / 2:
                    self.fenced = (
                        f"{self.job}: this driver could not renew its claim for {silent:.1f} s (more than "
                        f"half of {LEASE_KEY} = {self.lease_ms}): another driver may take the job over, so "
                        "its containers stop without committing"
                    )
                    log.error("%s", self.fenced)
                continue
            renewed = loop.time()
            if fenced is not None:
                log.error("%s", fenced)

    async def release(self) -> None:
        """End the claim (a no-op when fenced or never taken); the next driver starts without a warning."""
        mine, self.mine = self.mine, None
        if mine is None:
            return
        _held.discard(mine.owner)
        if self.fenced is None:
            await self._store.send([mine.message(released=True)])

    def _refusal(self, running: DriverClaim) -> JobRunningError:
        return JobRunningError(
            f"{self.job} is already running: its driver is {running.describe()} (epoch {running.epoch}); "
            "a job runs once: stop that driver first, or run this one with another job.id"
        )


def _same_process(pid: int, since_ms: int) -> bool:
    """True while process ``pid`` of this host is alive and older than the claim it made at ``since_ms``
    (a younger process with a reused pid is another one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = _started_ms(pid)
    if started is None:
        return True
    return started <= since_ms + 1000  # (boot time has a resolution of a second)


def _started_ms(pid: int) -> int | None:
    """When process ``pid`` started (epoch ms) from /proc, None where that is not known (a zombie: never, as
    it has ended)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[-1].split()
        if fields[0] == "Z":
            return 1 << 62
        with open("/proc/stat") as system:
            boot = next(int(line.split()[1]) for line in system if line.startswith("btime "))
        ticks = os.sysconf("SC_CLK_TCK")
        return boot * 1000 + int(fields[19]) * 1000 // ticks
    return None


__all__ = [
    "CLAIM_KEY",
    "DRIVER_CLAIM",
    "LEASE_KEY",
    "ClaimStore",
    "DriverClaim",
    "DriverClaims",
    "DriverLease",
    "stale",
]
