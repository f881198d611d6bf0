"""SystemConsumers: polls input systems into per-partition buffers and feeds the chooser.

Samza's rules: the chooser holds at most one envelope per partition; a partition's next envelope goes in
only after the previous one was taken by its task (:meth:`SystemConsumers.refill`); polls ask only for
partitions whose buffer is empty and that have not ended, so a slow task holds its partitions back
(back-pressure) while the others go on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from samza_nb.errors import SamzaError, SystemConsumersError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.systems.base import SystemConsumer


class SystemConsumers:
    """Buffers, fetchers and the chooser of one container."""

    def __init__(
        self,
        chooser: MessageChooser,
        consumers: Mapping[str, SystemConsumer],
        poll_interval_ms: int = 50,
        on_data: Callable[[], None] | None = None,
    ) -> None:
        self.chooser = chooser
        self._consumers = dict(consumers)
        self._poll_timeout = max(poll_interval_ms, 1) / 1000.0
        self._on_data = on_data or (lambda: None)
        self.buffers: dict[SystemStreamPartition, deque[IncomingMessageEnvelope]] = {}
        self._by_system: dict[str, list[SystemStreamPartition]] = {}
        self._outstanding: set[SystemStreamPartition] = set()
        self._ended: set[SystemStreamPartition] = set()
        self._fetch_needed: dict[str, asyncio.Event] = {}
        self._fetchers: list[asyncio.Task[None]] = []
        self.failure: BaseException | None = None
        self._stopping = False

    # -- setup ------------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from ``offset`` (its first message to process)."""
        consumer = self._consumers.get(ssp.system)
        if consumer is None:
            raise SystemConsumersError(f"no consumer for system {ssp.system!r} of input {ssp}")
        consumer.register(ssp, offset)
        self.chooser.register(ssp, offset)
        self.buffers[ssp] = deque()
        self._by_system.setdefault(ssp.system, []).append(ssp)

    async def start(self) -> None:
        """Start consumers and chooser, poll every partition once, then keep fetching in the background."""
        for consumer in self._consumers.values():
            await consumer.start()
        self.chooser.start()
        for system, ssps in self._by_system.items():
            self._accept(await self._poll(system, ssps, 0.0))
        for system, ssps in self._by_system.items():
            self._fetch_needed[system] = asyncio.Event()
            self._fetchers.append(asyncio.create_task(self._fetch_loop(system, ssps), name=f"fetch-{system}"))

    async def stop(self) -> None:
        """Stop fetching and stop the consumers and the chooser."""
        self._stopping = True
        for fetcher in self._fetchers:
            fetcher.cancel()
        for fetcher in self._fetchers:
            with contextlib.suppress(asyncio.CancelledError):
                await fetcher
        self._fetchers.clear()
        for consumer in self._consumers.values():
            await consumer.stop()
        self.chooser.stop()

    def stop_fetching(self) -> None:
        """No more polls (graceful stop); buffered messages stay where they are."""
        self._stopping = True
        for fetcher in self._fetchers:
            fetcher.cancel()

    # -- the per-message path ---------------------------------------------------------------------------
    def refill(self, ssp: SystemStreamPartition) -> None:
        """The last envelope of ``ssp`` was taken: give the chooser its next one, or ask for a poll."""
        buffer = self.buffers[ssp]
        if buffer:
            self.chooser.update(buffer.popleft())
        else:
            self._outstanding.discard(ssp)
            if ssp not in self._ended:
                event = self._fetch_needed.get(ssp.system)
                if event is not None:
                    event.set()

    def is_ended(self, ssp: SystemStreamPartition) -> bool:
        """True once ``ssp``'s end-of-stream was read."""
        return ssp in self._ended

    # -- fetching ---------------------------------------------------------------------------------------
    async def _poll(
        self, system: str, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        try:
            return await self._consumers[system].poll(ssps, timeout)
        except SamzaError:
            raise
        except Exception as exc:
            raise SystemConsumersError(f"polling system {system!r} failed: {exc!r}") from exc

    def _accept(self, batches: Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]) -> None:
        update = self.chooser.update
        for ssp, envelopes in batches.items():
            if not envelopes:
                continue
            buffer = self.buffers.get(ssp)
            if buffer is None:
                raise SystemConsumersError(f"a consumer returned messages of unregistered partition {ssp}")
            buffer.extend(envelopes)
            if envelopes[-1].is_end_of_stream:
                self._ended.add(ssp)
            if ssp not in self._outstanding:
                self._outstanding.add(ssp)
                update(buffer.popleft())
        if batches:
            self._on_data()

    async def _fetch_loop(self, system: str, ssps: list[SystemStreamPartition]) -> None:
        needed = self._fetch_needed[system]
        buffers, ended = self.buffers, self._ended
        try:
            while not self._stopping:
                needed.clear()
                wanted = [ssp for ssp in ssps if not buffers[ssp] and ssp not in ended]
                if not wanted:
                    await needed.wait()
                    continue
                self._accept(await self._poll(system, wanted, self._poll_timeout))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self.failure = exc
            self._on_data()
