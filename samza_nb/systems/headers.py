"""Checking the headers of a sent message, for the producers that carry them (Kafka, the durable log, the
in-memory system). Called only for a message that has headers, so a message without any costs nothing."""

from __future__ import annotations

from typing import Any

from samza_nb.api.streams import Headers
from samza_nb.errors import SystemProducerError


def checked_headers(headers: Any, where: object) -> Headers:
    """``headers`` as a tuple of ``(name, value)`` pairs, name a str and value bytes (a bytearray or
    memoryview is copied to bytes) or None; anything else is a SystemProducerError naming ``where`` (the
    stream the message was sent to) and the header."""
    result: list[tuple[str, bytes | None]] = []
    try:
        for item in headers:
            name, value = item
            if type(name) is not str:
                raise SystemProducerError(
                    f"message to {where}: header name {name!r} is a {type(name).__name__}, not a str"
                )
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise SystemProducerError(
                    f"message to {where}: header name {name!r} is not valid text (it cannot be UTF-8)"
                ) from None
            if value is not None and type(value) is not bytes:
                if not isinstance(value, (bytes, bytearray, memoryview)):
                    raise SystemProducerError(
                        f"message to {where}: header {name!r} has a {type(value).__name__} value "
                        f"({_short(value)}); header values are bytes (or None): encode it first"
                    )
                value = bytes(value)
            result.append((name, value))
    except (TypeError, ValueError):
        raise SystemProducerError(
            f"message to {where}: headers {_short(headers)} are not (name, value) pairs"
        ) from None
    return tuple(result)


def _short(value: object, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["checked_headers"]
