"""Starting and stopping aiokafka clients within a bounded time, and turning their failures into SamzaErrors
that name the broker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any, TypeVar

from aiokafka import AIOKafkaClient

from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.systems.kafka.config import KafkaSystemConfig

log = logging.getLogger(__name__)

T = TypeVar("T")

_CLIENT_PARAMS = (
    "client_id",
    "metadata_max_age_ms",
    "request_timeout_ms",
    "retry_backoff_ms",
    "ssl_context",
    "security_protocol",
    "connections_max_idle_ms",
    "sasl_mechanism",
    "sasl_plain_username",
    "sasl_plain_password",
    "sasl_kerberos_service_name",
    "sasl_kerberos_domain_name",
    "sasl_oauth_token_provider",
)


async def bounded(
    awaitable: Awaitable[T],
    settings: KafkaSystemConfig,
    what: str,
    error: type[SamzaError],
    timeout: float | None = None,
) -> T:
    """Await ``awaitable`` for at most the broker timeout; a timeout or a client failure becomes
    ``error`` saying what failed and naming the broker."""
    limit = settings.broker_timeout_s if timeout is None else timeout
    try:
        return await asyncio.wait_for(awaitable, limit)
    except TimeoutError:
        raise error(
            f"{what}: no answer from {settings.describe_brokers()} within {limit:g} s "
            f"(systems.{settings.system}.samza.broker.timeout.ms); is the broker running and reachable?"
        ) from None
    except SamzaError:
        raise
    except Exception as exc:
        raise error(f"{what}: {settings.describe_brokers()} failed: {describe(exc)}") from exc


def describe(exc: BaseException) -> str:
    """A one-line description of a client error."""
    name = type(exc).__name__
    text = " ".join(str(exc).split())
    if not text:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


class RepeatedLogFilter(logging.Filter):
    """Lets one record per (logger, message template) through every ``interval`` seconds.

    aiokafka logs every failed reconnect and fetch (dozens of lines a second while a broker is down);
    samza_nb reports the loss itself, with the broker's address, once its broker timeout runs out.
    """

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self.interval = interval
        self._last: dict[tuple[str, str], float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        """True for the first record of its kind in the interval."""
        key = (record.name, str(record.msg))
        now = record.created
        last = self._last.get(key)
        if last is not None and now - last < self.interval:
            return False
        self._last[key] = now
        return True


_QUIET = RepeatedLogFilter()


def quiet_repeated_client_logs() -> None:
    """Attach :class:`RepeatedLogFilter` to aiokafka's loggers (idempotent)."""
    names = [name for name in logging.root.manager.loggerDict if name.split(".")[0] == "aiokafka"]
    for name in ["aiokafka", *names]:
        logger = logging.getLogger(name)
        if _QUIET not in logger.filters:
            logger.addFilter(_QUIET)


async def close_quietly(client: Any, method: str = "stop") -> None:
    """Close an aiokafka client, logging (not raising) a failure; used on error paths."""
    close = getattr(client, method, None)
    if close is None:
        return
    try:
        await asyncio.wait_for(close(), 10.0)
    except asyncio.CancelledError:
        # aiokafka's fetcher lets the cancellation of its own tasks escape from close() after a lost
        # connection; only a cancellation of the caller is passed on.
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
        log.debug("closing %r: its own tasks were cancelled", client)
    except Exception as exc:
        log.debug("closing %r failed: %s", client, describe(exc))


def client_settings(settings: KafkaSystemConfig) -> dict[str, Any]:
    """Keyword arguments for an ``AIOKafkaClient`` / ``AIOKafkaAdminClient`` from the consumer settings
    (security and timeouts apply to every connection of the system)."""
    return {k: v for k, v in settings.consumer_settings.items() if k in _CLIENT_PARAMS}


async def topic_partitions(settings: KafkaSystemConfig, error: type[SamzaError]) -> dict[str, int]:
    """Every topic the brokers have, with its partition count. Asks for all topics' metadata, so (unlike a
    metadata request naming a topic) it never makes the broker auto-create one."""
    client = AIOKafkaClient(bootstrap_servers=settings.bootstrap_servers, **client_settings(settings))
    try:

        async def fetch() -> dict[str, int]:
            await client.bootstrap()
            cluster = await client.fetch_all_metadata()
            topics = cluster.topics(exclude_internal_topics=False)
            return {topic: len(cluster.partitions_for_topic(topic) or ()) for topic in topics}

        return await bounded(fetch(), settings, "reading the list of topics", error)
    finally:
        with contextlib.suppress(Exception):
            await client.close()


__all__ = [
    "RepeatedLogFilter",
    "bounded",
    "client_settings",
    "close_quietly",
    "describe",
    "quiet_repeated_client_logs",
    "topic_partitions",
]
