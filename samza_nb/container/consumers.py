"""SystemConsumers: polls input systems into per-partition buffers and feeds the chooser.

Samza's rules: the chooser holds at most one envelope per partition; a partition's next envelope goes in
only after the previous one was taken by its task (:meth:`SystemConsumers.refill`); polls ask only for
partitions whose buffer is empty and that have not ended, so a slow task holds its partitions back
(back-pressure) while the others go on.

Runs keep those rules: after :meth:`SystemConsumers.choose_run` chose an envelope of a partition, the
partition's next envelopes may be taken straight from its buffer (:meth:`SystemConsumers.take_run`), as
many as the chooser's run allows; :meth:`SystemConsumers.end_run` then tells the chooser how many were
taken and gives it the partition's next envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING

from samza_nb.chooser.base import as_run_chooser
from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.systems.base import ResettingConsumer

if TYPE_CHECKING:
    from samza_nb.api.metadata import OffsetReset
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.systems.base import SystemConsumer


_popleft = deque.popleft


class SystemConsumers:
    """Buffers, fetchers and the chooser of one container."""

    def __init__(
        self,
        chooser: MessageChooser,
        consumers: Mapping[str, SystemConsumer],
        poll_interval_ms: int = 50,
        on_data: Callable[[], None] | None = None,
        on_reset: Callable[[OffsetReset], None] | None = None,
    ) -> None:
        self.chooser = chooser
        runs = as_run_chooser(chooser)
        self._end_chooser_run = runs.end_run
        self.choose_run: Callable[[], tuple[IncomingMessageEnvelope | None, int]] = runs.choose_run
        """The chooser's next envelope and the room of its run (see :class:`RunChooser`)."""
        self.choose_round: Callable[[], tuple[Sequence[IncomingMessageEnvelope], int]] = runs.choose_round
        """Right after a choice with no room: the rest of its round and how many further rows may follow,
        or nothing (see :class:`RunChooser`). The caller then goes on with :meth:`take_rows` and
        :meth:`end_round`."""
        self._run_ssp: SystemStreamPartition | None = None
        self._run_before = 0
        self._consumers = dict(consumers)
        self._poll_timeout = max(poll_interval_ms, 1) / 1000.0
        self._on_data = on_data or (lambda: None)
        # Consumers that report the partitions they moved (ResettingConsumer): asked after every poll.
        self._on_reset = on_reset
        self._resetting = {
            name: consumer for name, consumer in consumers.items() if isinstance(consumer, ResettingConsumer)
        }
        self.buffers: dict[SystemStreamPartition, deque[IncomingMessageEnvelope]] = {}
        self._by_system: dict[str, list[SystemStreamPartition]] = {}
        self._outstanding: set[SystemStreamPartition] = set()
        self._ended: set[SystemStreamPartition] = set()
        self._fetch_needed: dict[str, asyncio.Event] = {}
        self._fetchers: list[asyncio.Task[None]] = []
        self.failure: BaseException | None = None
        self._stopping = False
        self.intake: Callable[[SystemStreamPartition, Sequence[IncomingMessageEnvelope]], None] | None = None
        """Told of each batch as it is buffered (a recording's digests); None: nobody."""

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

    def take_run(self, ssp: SystemStreamPartition, limit: int) -> Iterator[IncomingMessageEnvelope]:
        """Up to ``limit`` next envelopes of ``ssp``, whose last envelope was just chosen by
        :attr:`choose_run`, taken from its buffer one by one as the iterator is advanced (what is not
        iterated stays buffered). Never its end-of-stream: that one reaches its task through the chooser.

        Until :meth:`end_run`, the chooser holds nothing of ``ssp`` and nothing else may be taken.
        """
        buffer = self.buffers[ssp]
        available = len(buffer)
        self._run_ssp, self._run_before = ssp, available
        if ssp in self._ended:
            available -= 1  # the end-of-stream is buffered last
        count = min(available, limit)
        if count <= 0:
            return iter(())
        # Lazily, at C speed: popleft(buffer) ``count`` times.
        return map(_popleft, repeat(buffer, count))

    def end_run(self) -> int:
        """Close the run of :meth:`take_run`: tell the chooser how many envelopes were taken (returned)
        and give it the partition's next envelope."""
        ssp = self._run_ssp
        assert ssp is not None, "end_run without take_run"
        self._run_ssp = None
        taken = self._run_before - len(self.buffers[ssp])
        self._end_chooser_run(taken)
        self.refill(ssp)
        return taken

    def take_rows(
        self, ssps: Sequence[SystemStreamPartition], limit: int
    ) -> Iterator[tuple[IncomingMessageEnvelope, ...]]:
        """After :attr:`choose_round`: up to ``limit`` further rounds of ``ssps`` (the round's SSPs, in
        order), each a tuple of every SSP's next envelope, taken from the buffers as the iterator is
        advanced; as many rounds as every SSP has envelopes buffered, never an end-of-stream."""
        buffers, ended = self.buffers, self._ended
        rows = limit
        for ssp in ssps:
            available = len(buffers[ssp]) - (ssp in ended)
            if available < rows:
                rows = available
        if rows <= 0:
            return iter(())
        return zip(*(map(_popleft, repeat(buffers[ssp], rows)) for ssp in ssps), strict=True)

    def end_round(
        self, give_back: Sequence[IncomingMessageEnvelope], taken: Sequence[SystemStreamPartition]
    ) -> None:
        """Close a round: give the chooser back the envelopes of the round not started (in round order),
        then the next envelope of each SSP in ``taken`` (those whose last envelope was started)."""
        update = self.chooser.update
        for envelope in give_back:
            update(envelope)
        for ssp in taken:
            self.refill(ssp)

    # -- fetching ---------------------------------------------------------------------------------------
    async def _poll(
        self, system: str, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        try:
            batches = await self._consumers[system].poll(ssps, timeout)
        except SamzaError:
            raise
        except Exception as exc:
            raise SystemConsumersError(f"polling system {system!r} failed: {exc!r}") from exc
        resetting = self._resetting.get(system)
        if resetting is not None and self._on_reset is not None:
            # Before the messages of this poll: they may be the first of a moved partition.
            for reset in resetting.take_resets():
                self._on_reset(reset)
        return batches

    def _accept(self, batches: Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]) -> None:
        update = self.chooser.update
        for ssp, envelopes in batches.items():
            if not envelopes:
                continue
            buffer = self.buffers.get(ssp)
            if buffer is None:
                raise SystemConsumersError(f"a consumer returned messages of unregistered partition {ssp}")
            buffer.extend(envelopes)
            if self.intake is not None:
                self.intake(ssp, envelopes)
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
