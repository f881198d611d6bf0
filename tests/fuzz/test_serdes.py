"""Every built-in serde's ``from_bytes`` on arbitrary bytes: a value, or a SamzaError with a message.

Stores and streams share one set of built-ins (:mod:`samza_nb.serde`)."""

from __future__ import annotations

import pytest
from hypothesis import example, given

from samza_nb.control.serde import IntermediateMessageSerde, PickleIntermediateMessageSerde
from samza_nb.serde.registry import BUILTIN_SERDES
from tests.fuzz.budget import fuzz, parses
from tests.fuzz.strategies import DEEP_LIST, DEEP_OBJECT, any_bytes

SERDES = dict(BUILTIN_SERDES)


@pytest.mark.parametrize("name", sorted(SERDES))
@fuzz
@given(data=any_bytes)
@example(data=DEEP_LIST)
@example(data=DEEP_OBJECT)
def test_from_bytes(name: str, data: bytes) -> None:
    parses(SERDES[name]().from_bytes, data)


@pytest.mark.parametrize("make", [IntermediateMessageSerde, PickleIntermediateMessageSerde])
@fuzz
@given(data=any_bytes)
@example(data=b"\x00" + DEEP_LIST)
@example(data=b"\x01" + DEEP_OBJECT)
@example(data=b"\x02" + DEEP_LIST)
def test_intermediate_message_from_bytes(make: type[IntermediateMessageSerde], data: bytes) -> None:
    parses(make().from_bytes, data)


@pytest.mark.parametrize("kind", [b"\x01", b"\x02"])
@fuzz
@given(body=any_bytes)
def test_control_message_bodies(kind: bytes, body: bytes) -> None:
    """Watermark and end-of-stream bodies (JSON objects with the control fields) get past the type byte."""
    parses(IntermediateMessageSerde().from_bytes, kind + body)
