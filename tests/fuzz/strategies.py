"""Inputs for the fuzz properties: arbitrary bytes, and bytes that are almost what a parser expects (JSON of
any shape, with the field names the parsers look for), so that examples get past the first check."""

from __future__ import annotations

import json
import os
from typing import Any

from hypothesis import strategies as st

FIELD_NAMES = [
    "type", "taskName", "task-name", "version", "timestamp", "values", "value", "host", "username",
    "source", "Partition", "containerId", "config", "containers", "processor-id", "container-id", "tasks",
    "system-stream-partitions", "changelog-partition", "task-mode", "system", "stream", "partition",
    "offset", "store", "checkpoint-id", "input-offsets", "state-checkpoint-markers", "changelog-ssp",
    "changelog-offset", "keyBucket", "systemstreampartition-grouper-factory",
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.sampled_from(["1", "0", "-1", "Partition 0", "1-2", "1-2:3", "a:null", "kafka.s.0", "checkpoint"]),
)
keys = st.one_of(st.sampled_from(FIELD_NAMES), st.text(max_size=12))
json_values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=6)),
    max_leaves=24,
)


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


json_bytes = json_values.map(_dump)
"""JSON documents of any shape using the parsers' field names."""

any_bytes = st.one_of(st.binary(max_size=200), json_bytes)
"""Arbitrary bytes or JSON."""

argv_text = st.one_of(st.text(max_size=30), st.binary(max_size=30).map(os.fsdecode))
"""Text as a command line gives it: bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)."""


def nested(depth: int, open_: str = "[", close: str = "]") -> bytes:
    """JSON nested ``depth`` deep: more than the C JSON decoder recurses into."""
    return (open_ * depth + close * depth).encode()


DEEP_LIST = nested(5_000)
DEEP_OBJECT = ('{"a":' * 5_000 + "1" + "}" * 5_000).encode()

__all__ = ["DEEP_LIST", "DEEP_OBJECT", "any_bytes", "argv_text", "json_bytes", "json_values", "nested"]
