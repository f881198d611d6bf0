"""The embedded durable log: partitioned, append-only, durable streams in a directory.

:class:`DurableLog` is the handle for filling and reading streams from Python; :class:`LogSystemFactory`
makes it a system (``systems.<name>.samza.factory = samza_nb.systems.log.LogSystemFactory``, directory
``systems.<name>.log.dir``). The system named ``log`` is this one unless configured otherwise.
"""

from __future__ import annotations

from samza_nb.systems.log.durable_log import DurableLog
from samza_nb.systems.log.system import (
    LOG_OFFSET,
    LogSystemAdmin,
    LogSystemConsumer,
    LogSystemFactory,
    LogSystemProducer,
)

__all__ = [
    "LOG_OFFSET",
    "DurableLog",
    "LogSystemAdmin",
    "LogSystemConsumer",
    "LogSystemFactory",
    "LogSystemProducer",
]
