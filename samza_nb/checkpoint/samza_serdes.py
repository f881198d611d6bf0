"""The checkpoint messages of Apache Samza's Kafka checkpoint topic, byte for byte.

Each follows a Samza source (apache/samza), and ``tests/fixtures/samza_checkpoints`` holds messages written
by those very classes:

- key (samza-kafka ``KafkaCheckpointLogKeySerde``): ``{"systemstreampartition-grouper-factory": <grouper
  factory class>, "taskName": <task>, "type": "checkpoint" | "checkpoint-v2"}`` in that order;
- v1 value (samza-core ``CheckpointV1Serde``): ``{"SystemStreamPartition [<system>, <stream>, <n>]":
  {"system", "partition", "offset", "stream"}}``, every entry exactly those four string fields (Samza drops
  a whole checkpoint with an entry of fewer); a store's changelog is an entry of its own, keyed by the
  changelog's SSP, its offset ``"<checkpointId>:<offset>"`` (``KafkaChangelogSSPOffset``; ``null`` for an
  empty changelog);
- v2 value (``CheckpointV2Serde``, ``JsonCheckpointV2Mixin``): ``{"checkpoint-id", "input-offsets":
  {"<system>.<stream>.<n>": offset}, "state-checkpoint-markers": {<state backend factory>: {<store>:
  <marker>}}, "version": 2}``; a Kafka changelog's marker (``KafkaStateCheckpointMarker``) is the JSON text
  ``{"version": 1, "changelog-ssp": {"system", "partition", "stream", "keyBucket": -1},
  "changelog-offset"}``;
- the checkpoint id (``CheckpointId``): ``<epoch millis>-<nano id>``.

Maps are written in the iteration order of the Java HashMaps Samza builds them in (:mod:`.java_json`).
Decoding is as lenient as Samza's (extra fields, any key order) and raises ValueError saying what is wrong.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.java_json import (
    JavaHashMap,
    java_order,
    java_ssp_hash,
    json_nullable,
    json_object,
    json_string,
)

CHECKPOINT_V1_TYPE: Final[str] = "checkpoint"
CHECKPOINT_V2_TYPE: Final[str] = "checkpoint-v2"
KEY_TYPE_VERSIONS: Final[dict[str, int]] = {CHECKPOINT_V1_TYPE: 1, CHECKPOINT_V2_TYPE: 2}
VERSION_KEY_TYPES: Final[dict[int, str]] = {v: k for k, v in KEY_TYPE_VERSIONS.items()}
KAFKA_STATE_BACKEND: Final[str] = "org.apache.samza.storage.KafkaChangelogStateBackendFactory"
"""The state backend whose markers are Kafka changelog offsets (``KafkaStateCheckpointMarker``)."""

_GROUPER_FIELD: Final = "systemstreampartition-grouper-factory"
_CHECKPOINT_ID = re.compile(r"^(-?\d+)-(-?\d+)$")
_V1_FIELDS: Final = ("system", "stream", "partition", "offset")
_SSP_FIELDS: Final = ("system", "stream", "partition", "keyBucket")


@dataclass(frozen=True)
class CheckpointKey:
    """A checkpoint message's key: its ``type`` (``checkpoint`` or ``checkpoint-v2``), task and grouper."""

    type: str
    task_name: str
    grouper: str

    def encode(self) -> bytes:
        """The key's bytes, as ``KafkaCheckpointLogKeySerde.toBytes``."""
        fields = ((_GROUPER_FIELD, self.grouper), ("taskName", self.task_name), ("type", self.type))
        return json_object((name, json_string(value)) for name, value in fields).encode("utf-8")

    @classmethod
    def decode(cls, data: bytes | None) -> CheckpointKey | None:
        """The key in ``data``, or None when it is not a checkpoint key (a JSON object of 3 strings)."""
        if data is None:
            return None
        try:
            value = json.loads(data)
        except (ValueError, UnicodeDecodeError, RecursionError):  # RecursionError: nested too deep
            return None
        if not isinstance(value, dict):
            return None
        kind, task, grouper = value.get("type"), value.get("taskName"), value.get(_GROUPER_FIELD)
        if not (isinstance(kind, str) and isinstance(task, str) and isinstance(grouper, str)):
            return None
        return cls(kind, task, grouper)


def new_checkpoint_id() -> str:
    """A fresh ``CheckpointId``: ``<epoch millis>-<nano id>`` (``System.nanoTime() % 1000000`` in Samza)."""
    return f"{time.time_ns() // 1_000_000}-{time.monotonic_ns() % 1_000_000}"


def check_checkpoint_id(text: object) -> str:
    """``text`` when it is a checkpoint id (``CheckpointId.deserialize`` would read it); ValueError else."""
    if not isinstance(text, str) or not _CHECKPOINT_ID.match(text):
        raise ValueError(f"checkpoint id {text!r} is not <millis>-<nanoId>")
    return text


def encode_changelog_offset(checkpoint_id: str, offset: str | None) -> str:
    """``KafkaChangelogSSPOffset.toString``: ``"<checkpointId>:<offset>"`` (``null`` when empty)."""
    return f"{checkpoint_id}:{'null' if offset is None else offset}"


def decode_changelog_offset(text: str) -> tuple[str, str | None]:
    """``KafkaChangelogSSPOffset.fromString``: the checkpoint id and the offset (None for ``null``)."""
    parts = text.split(":")
    if len(parts) != 2 or not parts[1]:
        raise ValueError(f"changelog offset {text!r} is not <checkpointId>:<offset>")
    return check_checkpoint_id(parts[0]), None if parts[1] == "null" else parts[1]


def _ssp_name(ssp: SystemStreamPartition) -> str:
    return f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]"


def _ssp_hashmap(ssps: list[SystemStreamPartition], copy: bool) -> list[SystemStreamPartition]:
    """SSPs in the order of a HashMap of them (a copy-constructed one when ``copy``) filled sorted."""
    table = JavaHashMap(copy_of=len(ssps)) if copy else JavaHashMap()
    order = table.put_all((java_ssp_hash(ssp), ssp) for ssp in sorted(ssps)).order()
    return [ssp for ssp in order if isinstance(ssp, SystemStreamPartition)]


def _v1_entry(ssp: SystemStreamPartition, offset: str | None) -> str:
    values = {"system": ssp.system, "stream": ssp.stream, "partition": str(ssp.partition), "offset": offset}
    return json_object((name, json_nullable(values[name])) for name in java_order(_V1_FIELDS, 4))


def encode_v1(
    inputs: Mapping[SystemStreamPartition, str],
    changelogs: Mapping[SystemStreamPartition, str | None],
    checkpoint_id: str,
) -> bytes:
    """A v1 value, as ``TaskInstance`` builds it (input offsets, then each changelog SSP's
    ``KafkaChangelogSSPOffset``) and ``CheckpointV1Serde.toBytes`` writes it."""
    offsets: dict[SystemStreamPartition, str | None] = dict(inputs)
    for ssp, offset in changelogs.items():
        offsets[ssp] = encode_changelog_offset(checkpoint_id, offset)
    # allCheckpointOffsets: new HashMap + putAll(inputs) (presized as a copy), then the changelog SSPs.
    entries = JavaHashMap(copy_of=len(inputs))
    entries.put_all((java_ssp_hash(ssp), ssp) for ssp in _ssp_hashmap(list(inputs), copy=True))
    entries.put_all((java_ssp_hash(ssp), ssp) for ssp in _ssp_hashmap(list(changelogs), copy=False))
    ordered = [ssp for ssp in entries.order() if isinstance(ssp, SystemStreamPartition)]
    by_name = {_ssp_name(ssp): ssp for ssp in ordered}
    names = java_order(list(by_name), len(by_name))
    body = json_object((name, _v1_entry(by_name[name], offsets[by_name[name]])) for name in names)
    return body.encode("utf-8")


def decode_v1(data: bytes) -> tuple[dict[SystemStreamPartition, str | None], dict[str, str]]:
    """A v1 value's offsets by SSP (None: Samza's null offset), and the ``"store <name>"`` entries that
    samza_nb wrote before it wrote Samza's format (store → offset). ValueError when it is not one."""
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    offsets: dict[SystemStreamPartition, str | None] = {}
    legacy: dict[str, str] = {}
    for name, entry in value.items():
        if not isinstance(entry, dict):
            raise ValueError(f"entry {name!r} is not a JSON object")
        if set(entry) == {"store", "offset"} and name.startswith("store "):
            legacy[_text(entry, "store", name)] = _text(entry, "offset", name)
            continue
        if len(entry) < len(_V1_FIELDS) or any(entry.get(field) is None for field in _V1_FIELDS[:3]):
            raise ValueError(f"entry {name!r} lacks one of system, stream, partition, offset")
        partition = _text(entry, "partition", name)
        if not partition.lstrip("-+").isdigit():
            raise ValueError(f"entry {name!r}: partition {partition!r} is not a number")
        system, stream = _text(entry, "system", name), _text(entry, "stream", name)
        ssp = SystemStreamPartition(system, stream, int(partition))
        offset = entry.get("offset")
        offsets[ssp] = None if offset is None else _text(entry, "offset", name)
    return offsets, legacy


def _text(entry: Mapping[str, Any], field: str, name: str) -> str:
    value = entry.get(field)
    if not isinstance(value, str):
        raise ValueError(f"entry {name!r}: {field} {value!r} is not a string")
    return value


def encode_marker(ssp: SystemStreamPartition, offset: str | None) -> str:
    """``KafkaStateCheckpointMarker.serialize``: a changelog SSP and its newest offset (None: empty)."""
    ssp_values = {
        "system": json_string(ssp.system),
        "stream": json_string(ssp.stream),
        "partition": str(ssp.partition),
        "keyBucket": "-1",
    }
    ssp_json = json_object((name, ssp_values[name]) for name in java_order(_SSP_FIELDS))
    return json_object(
        (("version", "1"), ("changelog-ssp", ssp_json), ("changelog-offset", json_nullable(offset)))
    )


def decode_marker(text: str) -> tuple[SystemStreamPartition, str | None]:
    """``KafkaStateCheckpointMarker.deserialize``: the changelog SSP and offset; ValueError when not one."""
    value = json.loads(text)
    if not isinstance(value, dict) or not isinstance(value.get("changelog-ssp"), dict):
        raise ValueError(f"state checkpoint marker {text!r} is not a Kafka changelog marker")
    ssp, offset = value["changelog-ssp"], value.get("changelog-offset")
    system, stream, partition = ssp.get("system"), ssp.get("stream"), ssp.get("partition")
    if not (isinstance(system, str) and isinstance(stream, str) and type(partition) is int):
        raise ValueError(f"state checkpoint marker {text!r}: changelog-ssp is not system, stream, partition")
    if offset is not None and not isinstance(offset, str):
        raise ValueError(f"state checkpoint marker {text!r}: changelog-offset is not a string")
    return SystemStreamPartition(system, stream, partition), offset


@dataclass(frozen=True)
class CheckpointV2:
    """A decoded v2 value: its id, input offsets and state checkpoint markers (backend → store → marker)."""

    checkpoint_id: str
    inputs: dict[SystemStreamPartition, str]
    markers: dict[str, dict[str, str]]


def encode_v2(
    checkpoint_id: str,
    inputs: Mapping[SystemStreamPartition, str],
    stores: Mapping[str, tuple[SystemStreamPartition, str | None]],
) -> bytes:
    """A v2 value as ``CheckpointV2Serde.toBytes`` writes it: ``stores`` (store → changelog SSP and newest
    offset) become Kafka changelog markers; none at all is an empty ``state-checkpoint-markers``."""
    input_json = json_object(
        (f"{ssp.system}.{ssp.stream}.{ssp.partition}", json_string(inputs[ssp]))
        for ssp in _ssp_hashmap(list(inputs), copy=True)
    )
    markers = json_object(
        (store, json_string(encode_marker(*stores[store]))) for store in java_order(sorted(stores))
    )
    state = json_object([(KAFKA_STATE_BACKEND, markers)] if stores else [])
    fields = (
        ("checkpoint-id", json_string(checkpoint_id)),
        ("input-offsets", input_json),
        ("state-checkpoint-markers", state),
        ("version", "2"),
    )
    return json_object(fields).encode("utf-8")


def decode_v2(data: bytes) -> CheckpointV2:
    """A v2 value (unknown fields ignored, as Samza); ValueError when it is not one."""
    value = json.loads(data)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    inputs_json, markers_json = value.get("input-offsets"), value.get("state-checkpoint-markers")
    if not isinstance(inputs_json, dict) or not isinstance(markers_json, dict):
        raise ValueError("input-offsets or state-checkpoint-markers is missing or not a JSON object")
    inputs: dict[SystemStreamPartition, str] = {}
    for name, offset in inputs_json.items():
        system, _, rest = name.partition(".")
        stream, _, partition = rest.rpartition(".")
        if not system or not stream or not partition.isdigit():
            raise ValueError(f"input-offsets key {name!r} is not <system>.<stream>.<partition>")
        if offset is None:
            continue
        if not isinstance(offset, str):
            raise ValueError(f"input-offsets {name!r}: offset {offset!r} is not a string")
        inputs[SystemStreamPartition(system, stream, int(partition))] = offset
    markers: dict[str, dict[str, str]] = {}
    for backend, stores in markers_json.items():
        if not isinstance(stores, dict) or not all(isinstance(m, str) for m in stores.values()):
            raise ValueError(f"state-checkpoint-markers of {backend!r} is not a map of store to marker")
        markers[backend] = dict(stores)
    return CheckpointV2(check_checkpoint_id(value.get("checkpoint-id")), inputs, markers)


__all__ = [
    "CHECKPOINT_V1_TYPE",
    "CHECKPOINT_V2_TYPE",
    "KAFKA_STATE_BACKEND",
    "KEY_TYPE_VERSIONS",
    "VERSION_KEY_TYPES",
    "CheckpointKey",
    "CheckpointV2",
    "check_checkpoint_id",
    "decode_changelog_offset",
    "decode_marker",
    "decode_v1",
    "decode_v2",
    "encode_changelog_offset",
    "encode_marker",
    "encode_v1",
    "encode_v2",
    "new_checkpoint_id",
]
