"""Samza's checkpoint messages (tests/fixtures/samza_checkpoints, written by Samza's own serde classes) round
trip byte for byte through samza_nb's serdes, and checkpoint streams are read as Samza reads them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import SystemStream
from samza_nb.checkpoint.java_json import java_order, java_string_hash, json_string
from samza_nb.checkpoint.samza_serdes import (
    CheckpointKey,
    decode_changelog_offset,
    decode_marker,
    decode_v1,
    decode_v2,
    encode_v1,
    encode_v2,
)
from samza_nb.checkpoint.stream_format import CheckpointFormat, CheckpointTable
from samza_nb.config.grouper_names import canonical_grouper, grouper_class_name
from samza_nb.coordinator.grouper import GroupBySystemStreamPartition, grouper_for
from samza_nb.errors import CheckpointError, ConfigError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "samza_checkpoints"
GBP = "org.apache.samza.container.grouper.stream.GroupByPartitionFactory"
GBSSP = "org.apache.samza.container.grouper.stream.GroupBySystemStreamPartitionFactory"
TOPIC = "__samza_checkpoint_ver_1_for_job_1"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def S(system: str, stream: str, partition: int) -> SystemStreamPartition:
    return SystemStreamPartition(system, stream, partition)


PAGE_VIEWS = {S("kafka", "page-views", 0): "41"}
COUNTS = S("kafka", "counts-changelog", 0)
MANY = {S("kafka", "clicks", p): str(100 + p * 17) for p in range(11)}
MANY |= {S("kafka", "orders", 2): "9", S("other", "page_views.v2", 11): "12345678901234"}
STORE_A, STORE_B = S("kafka", "store-a-changelog", 2), S("kafka", "store-b-changelog", 2)


def test_java_string_hash_and_escapes() -> None:
    assert java_string_hash("") == 0
    assert java_string_hash("system") == (-887328209) & 0xFFFFFFFF  # "system".hashCode() in Java
    assert java_string_hash("é😀") == 1996812  # jshell: "é😀".hashCode() (UTF-16 code units)
    assert java_order(["system", "stream", "partition", "offset"], 4) == [
        "system",
        "partition",
        "offset",
        "stream",
    ]
    assert json_string('a"\\\n\x01é') == '"a\\"\\\\\\n\\u0001é"'


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("key-v1-gbp", CheckpointKey("checkpoint", "Partition 0", GBP)),
        ("key-v2-gbp", CheckpointKey("checkpoint-v2", "Partition 0", GBP)),
        ("key-v1-gbssp", CheckpointKey("checkpoint", "SystemStreamPartition [kafka, page-views, 3]", GBSSP)),
    ],
)
def test_keys_round_trip_byte_for_byte(name: str, key: CheckpointKey) -> None:
    assert key.encode() == fixture(name)
    assert CheckpointKey.decode(fixture(name)) == key


def test_v1_values_round_trip_byte_for_byte() -> None:
    data = fixture("value-v1-stateful")
    assert encode_v1(PAGE_VIEWS, {COUNTS: "7"}, "1700000000000-123456") == data
    assert decode_v1(data) == ({**PAGE_VIEWS, COUNTS: "1700000000000-123456:7"}, {})
    many = fixture("value-v1-many")
    assert encode_v1(MANY, {STORE_A: "100", STORE_B: None}, "1712345678901-42") == many
    offsets, _ = decode_v1(many)
    assert decode_changelog_offset(offsets[STORE_B] or "") == ("1712345678901-42", None)
    assert all(len(entry) == 4 for entry in __import__("json").loads(many).values())  # exactly four fields


def test_v2_values_round_trip_byte_for_byte() -> None:
    data = fixture("value-v2-stateful")
    assert encode_v2("1700000000000-123456", PAGE_VIEWS, {"counts": (COUNTS, "7")}) == data
    decoded = decode_v2(data)
    assert decoded.checkpoint_id == "1700000000000-123456" and decoded.inputs == PAGE_VIEWS
    [(backend, markers)] = decoded.markers.items()
    assert backend == "org.apache.samza.storage.KafkaChangelogStateBackendFactory"
    assert decode_marker(markers["counts"]) == (COUNTS, "7")
    stores = {"store-a": (STORE_A, "100"), "store-b": (STORE_B, None)}
    assert encode_v2("1712345678901-42", MANY, stores) == fixture("value-v2-many")
    assert decode_v2(fixture("value-v2-many")).inputs == MANY  # a stream name with dots, too
    assert encode_v2("1712345678901-42", PAGE_VIEWS, {}) == fixture("value-v2-stateless")


def stateful_format(**extra: str) -> CheckpointFormat:
    return CheckpointFormat.from_config(
        Config(
            {
                "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
                "stores.counts.changelog": "kafka.counts-changelog",
                **extra,
            }
        )
    )


def table(fmt: CheckpointFormat, *messages: tuple[str, bytes | None, int | None]) -> CheckpointTable:
    result = CheckpointTable(TOPIC, fmt)
    for offset, (name, value, timestamp) in enumerate(messages):
        result.apply(fixture(name), value, offset, timestamp)
    return result


EXPECTED = Checkpoint(PAGE_VIEWS, {"counts": "7"}, {"counts": COUNTS})


def test_samza_checkpoints_become_samza_nb_checkpoints_of_either_version() -> None:
    v1 = table(stateful_format(), ("key-v1-gbp", fixture("value-v1-stateful"), None))
    assert v1.checkpoints["Partition 0"] == EXPECTED
    assert v1.checkpoints["Partition 0"].changelog_ssps == {"counts": COUNTS}
    v2 = table(
        stateful_format(**{"task.checkpoint.read.versions": "2"}),
        ("key-v2-gbp", fixture("value-v2-stateful"), None),
    )
    assert v2.checkpoints["Partition 0"] == EXPECTED
    assert v2.checkpoints["Partition 0"].changelog_ssps == {"counts": COUNTS}


def test_samza_nb_writes_what_it_reads_and_each_write_version() -> None:
    fmt = stateful_format()
    messages = fmt.encode("Partition 0", EXPECTED)
    assert [key for key, _ in messages] == [fixture("key-v1-gbp"), fixture("key-v2-gbp")]
    checkpoint_id = decode_v2(messages[1][1]).checkpoint_id  # one id for both versions, as Samza
    assert messages[0][1] == encode_v1(PAGE_VIEWS, {COUNTS: "7"}, checkpoint_id)
    assert messages[1][1] == encode_v2(checkpoint_id, PAGE_VIEWS, {"counts": (COUNTS, "7")})
    only_v2 = stateful_format(**{"task.checkpoint.write.versions": "2"})
    assert [k for k, _ in only_v2.encode("Partition 0", EXPECTED)] == [fixture("key-v2-gbp")]
    with pytest.raises(CheckpointError, match="store 'counts' has a changelog offset but no changelog SSP"):
        fmt.encode("Partition 0", Checkpoint(PAGE_VIEWS, {"counts": "7"}))


def test_read_versions_choose_which_message_wins() -> None:
    newer_v1 = encode_v1({S("kafka", "page-views", 0): "50"}, {COUNTS: "9"}, "1700000000001-1")
    messages = (
        ("key-v2-gbp", fixture("value-v2-stateful"), 1_000),
        ("key-v1-gbp", newer_v1, 2_000),
    )
    prefer_v2 = table(stateful_format(**{"task.checkpoint.read.versions": "2,1"}), *messages)
    assert prefer_v2.checkpoints["Partition 0"] == EXPECTED  # the later v1 has lower priority
    only_v1 = table(stateful_format(), *messages)
    assert only_v1.checkpoints["Partition 0"].offsets == {S("kafka", "page-views", 0): "50"}
    stale = (messages[0], ("key-v1-gbp", newer_v1, 1_000 + 600_001))  # past the live max age
    assert table(stateful_format(**{"task.checkpoint.read.versions": "2,1"}), *stale).checkpoints[
        "Partition 0"
    ].offsets == {S("kafka", "page-views", 0): "50"}
    deleted = table(
        stateful_format(), ("key-v1-gbp", fixture("value-v1-stateful"), None), ("key-v1-gbp", None, None)
    )
    assert deleted.checkpoints == {}


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (b"not json", "Expecting value"),
        (b"[1]", "not a JSON object"),
        (b'{"x": {"system": "kafka", "stream": "s", "partition": "0"}}', "lacks one of"),
        (b'{"x": {"system": "kafka", "stream": "s", "partition": "p", "offset": "1"}}', "not a number"),
    ],
)
def test_an_unparseable_value_names_topic_offset_and_task(value: bytes, what: str) -> None:
    with pytest.raises(
        CheckpointError, match=f"{TOPIC} offset 0: the checkpoint value of task 'Partition 0'"
    ) as info:
        table(stateful_format(), ("key-v1-gbp", value, None))
    assert what in str(info.value)
    broken = encode_v1(PAGE_VIEWS, {COUNTS: "7"}, "1-2").replace(b"1-2:7", b"no-id-7")
    with pytest.raises(CheckpointError, match="changelog offset 'no-id-7' is not <checkpointId>:<offset>"):
        table(stateful_format(), ("key-v1-gbp", broken, None))


def test_old_samza_nb_checkpoints_are_read_and_other_groupers_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # What samza_nb wrote before it wrote Samza's format (short grouper name, "store <name>" entries).
    old_key = (
        b'{"systemstreampartition-grouper-factory":"group-by-partition",'
        b'"taskName":"Partition 0","type":"checkpoint"}'
    )
    old_value = (
        b'{"SystemStreamPartition [kafka, page-views, 0]":{"offset":"41","partition":"0",'
        b'"stream":"page-views","system":"kafka"},"store counts":{"offset":"7","store":"counts"}}'
    )
    migrated = CheckpointTable(TOPIC, stateful_format())
    migrated.apply(old_key, old_value, 0)
    assert migrated.checkpoints["Partition 0"] == Checkpoint(PAGE_VIEWS, {"counts": "7"})
    with caplog.at_level(logging.WARNING):
        other = CheckpointTable(TOPIC, stateful_format())
        other.apply(fixture("key-v1-gbssp"), fixture("value-v1-stateful"), 3)
    assert other.checkpoints == {}
    assert "grouper" in caplog.text and GBSSP in caplog.text
    by_class = CheckpointTable(TOPIC, stateful_format(**{"job.systemstreampartition.grouper.factory": GBSSP}))
    by_class.apply(fixture("key-v1-gbssp"), fixture("value-v1-stateful"), 0)
    assert list(by_class.checkpoints) == ["SystemStreamPartition [kafka, page-views, 3]"]


def test_grouper_class_names_are_accepted_and_versions_checked() -> None:
    assert canonical_grouper(GBP) == canonical_grouper("GROUP-BY-PARTITION") == "group-by-partition"
    assert grouper_class_name("group-by-ssp") == GBSSP
    assert isinstance(
        grouper_for({"job.systemstreampartition.grouper.factory": GBSSP}), GroupBySystemStreamPartition
    )
    with pytest.raises(ConfigError, match="GroupByPartitionFactory"):
        grouper_for({"job.systemstreampartition.grouper.factory": "GroupByHash"})
    assert Config({"job.systemstreampartition.grouper.factory": GBP}).get(
        "job.systemstreampartition.grouper.factory"
    )
    for key, value in (("task.checkpoint.write.versions", "1,3"), ("task.checkpoint.read.versions", " ")):
        with pytest.raises(ConfigError, match=key):
            stateful_format(**{key: value})
    assert stateful_format().changelogs == {"counts": SystemStream("kafka", "counts-changelog")}
