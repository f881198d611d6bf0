"""Reading a store's changelog partition back, in batches, for restore."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from samza_nb.errors import SamzaError
from samza_nb.storage.generation import MARKER_KEY, GenerationMarker

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin, SystemFactory

RESTORE_BATCH = 10_000


class ChangelogReader:
    """Reads one changelog partition from an offset up to (and including) a target offset."""

    def __init__(
        self, factory: SystemFactory, ssp: SystemStreamPartition, config: Config, admin: SystemAdmin
    ) -> None:
        self._factory = factory
        self._ssp = ssp
        self._config = config
        self._admin = admin

    async def read(
        self, start: str, target: str, poll_timeout: float = 1.0
    ) -> AsyncIterator[list[tuple[bytes, bytes | None]] | GenerationMarker]:
        """Batches of ``(key, value)`` records (value None = delete) from ``start`` through ``target``, and
        in their place in the order each generation marker met (:mod:`.generation`), never in a batch.

        A changelog that ends (or stops delivering) before ``target`` is an error naming it: restoring
        less than the checkpoint covers would silently lose state.
        """
        ssp, compare = self._ssp, self._admin.offset_comparator
        if compare(start, target) > 0:
            return
        consumer = self._factory.get_consumer(ssp.system, self._config)
        consumer.register(ssp, start)
        await consumer.start()
        try:
            batch: list[tuple[bytes, bytes | None]] = []
            idle_polls = 0
            while True:
                polled = (await consumer.poll([ssp], poll_timeout)).get(ssp, ())
                if not polled:
                    idle_polls += 1
                    if idle_polls >= 3:
                        raise SamzaError(
                            f"changelog {ssp} stopped before offset {target}, which the checkpoint covers"
                        )
                    continue
                idle_polls = 0
                for envelope in polled:
                    if envelope.is_end_of_stream:
                        raise SamzaError(
                            f"changelog {ssp} ended before offset {target}, which the checkpoint covers"
                        )
                    if envelope.key == MARKER_KEY:
                        if batch:
                            yield batch
                            batch = []
                        yield GenerationMarker.decode(ssp, envelope.offset, envelope.message)
                    else:
                        batch.append((envelope.key, envelope.message))
                    if compare(envelope.offset, target) >= 0:
                        yield batch
                        return
                    if len(batch) >= RESTORE_BATCH:
                        yield batch
                        batch = []
        finally:
            await consumer.stop()
