"""The waiting helper fails loudly and returns what the condition saw."""

from __future__ import annotations

import asyncio

import pytest

from tests.eventually import aeventually, eventually


def test_returns_the_first_truthy_value() -> None:
    values = iter([0, None, [], 7])
    assert eventually(lambda: next(values)) == 7


def test_fails_with_the_message_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"the queue drained .*last value: 3"):
        eventually(_falsy_three, timeout=0.01, message="the queue drained")


class _Three(int):
    def __bool__(self) -> bool:
        return False


def _falsy_three() -> int:
    return _Three(3)


def test_async_variant_awaits_awaitable_conditions() -> None:
    state = {"n": 0}

    async def ready() -> bool:
        state["n"] += 1
        return state["n"] >= 3

    assert asyncio.run(aeventually(ready)) is True
