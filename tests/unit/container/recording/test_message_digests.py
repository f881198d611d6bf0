"""A recording's message digests (samza_nb.container.recording.message_digests): a batch's digests are each
message's own, whatever its kinds of key and value, and they are the same in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.container.recording.message_digests import RecordedDigests, digest, digests, matches

SSP = SystemStreamPartition("s", "in", 0)
REPO = Path(__file__).resolve().parents[3]

BATCHES: list[list[tuple[Any, Any]]] = [
    [(None, i) for i in range(-3, 50)],
    [(None, f"line {i} é") for i in range(20)],
    [(None, b"\x00\xff" * i) for i in range(5)],
    [(None, None), (None, None)],
    [(None, {"user": i, "page": "/x"}) for i in range(5)],
    [(f"k{i}", i) for i in range(10)],
    [(None, 1), ("k", "v"), (3, b"b"), (None, 2.5), (None, True), (None, "\udc80 lone surrogate")],
    [(None, "ok"), (None, "\udc80")],
]


def envelopes(batch: list[tuple[Any, Any]]) -> list[IncomingMessageEnvelope]:
    return [IncomingMessageEnvelope(SSP, str(i), key, value) for i, (key, value) in enumerate(batch)]


@pytest.mark.parametrize("batch", BATCHES)
def test_a_batch_digests_each_message_as_alone(batch: list[tuple[Any, Any]]) -> None:
    made = envelopes(batch)
    assert list(digests(made)) == [digest(e) for e in made]


def test_a_changed_key_or_value_changes_the_digest() -> None:
    base = IncomingMessageEnvelope(SSP, "0", "k", {"n": 1})
    for key, value in [("k", {"n": 2}), ("j", {"n": 1}), (None, {"n": 1}), ("k", "{'n': 1}x")]:
        assert digest(IncomingMessageEnvelope(SSP, "0", key, value)) != digest(base)


def test_digests_are_the_same_in_another_process() -> None:
    code = (
        "import json\nfrom samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition\n"
        "from samza_nb.container.recording.message_digests import digest\n"
        "ssp = SystemStreamPartition('s', 'in', 0)\n"
        "items = [(None, 'a string'), ('key', b'bytes'), (None, 12345), (None, {'n': [1, 'x']})]\n"
        "print(json.dumps([digest(IncomingMessageEnvelope(ssp, '0', k, v)) for k, v in items]))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": "random"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    items = [(None, "a string"), ("key", b"bytes"), (None, 12345), (None, {"n": [1, "x"]})]
    assert json.loads(done.stdout) == [digest(IncomingMessageEnvelope(SSP, "0", k, v)) for k, v in items]


SEEDED = """
import json
from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.container.recording.message_digests import RecordedDigests, digest, digests, matches
ssp = SystemStreamPartition("s", "in", 0)
values = [{"a", "b", "c", "d", "e", "f", "g", "h"}, frozenset({"x", "y", "z", "w"}), ("k", {"p", "q"}),
          {"n": {"s", "t", "u", "v"}}, [set(), frozenset(), {b"1", b"2", b"3"}]]
made = [IncomingMessageEnvelope(ssp, str(i), None, v) for i, v in enumerate(values)]
made.append(IncomingMessageEnvelope(ssp, "9", {"k", "j", "l"}, 1))
print(json.dumps([[digest(e) for e in made], list(digests(made))]))
"""


def test_a_set_digests_alike_whatever_the_hash_seed() -> None:
    # Recorded in one process, replayed in another: a set of str or bytes iterates (and prints) in an
    # order that follows the process's hash seed; its digest must not, or the replay stops at a false
    # mismatch.
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", SEEDED], capture_output=True, text=True, env=env, timeout=60
        )
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1


def test_what_holds_no_set_digests_its_repr_as_before() -> None:
    # (so the recordings made before sets were digested apart replay as they did)
    for value in [(1, "a"), [1.5, None], {"k": [1, 2]}, ("x",), {"a": "{b}"}]:
        assert digest(IncomingMessageEnvelope(SSP, "0", None, value)) == zlib.crc32(repr(value).encode())


def test_a_set_recorded_before_sets_were_sorted_still_matches() -> None:
    made = IncomingMessageEnvelope(SSP, "0", {"b", "a"}, {10, 9, 100})
    before = zlib.crc32(repr(made.message).encode())
    mixed = (zlib.crc32(repr(made.key).encode()) * 0x9E3779B97F4A7C15 + 1) & 0xFFFFFFFFFFFFFFFF
    before ^= mixed - (1 << 64) if mixed >= 1 << 63 else mixed
    assert matches(made, before) and matches(made, digest(made))
    assert not matches(made, digest(IncomingMessageEnvelope(SSP, "0", {"b", "a"}, {10, 9, 101})))


def test_recorded_digests_find_the_first_message_that_differs_in_a_polled_batch() -> None:
    made = envelopes([(None, i) for i in range(20)])
    recorded = RecordedDigests()
    recorded.add(0, None, digests(made[:8]))  # consecutive batches: one run of digests
    recorded.add(8, None, digests(made[8:16]))
    recorded.add(None, [e.offset for e in made[16:]], digests(made[16:]))  # a listed batch
    recorded.add(None, ["a", "b"], digests(envelopes([(None, "a"), (None, "b")])))  # not integers
    assert recorded.get("3") == 3 and recorded.get("19") == 19 and recorded.get("20") is None
    assert recorded.first_difference(made) == -1
    assert recorded.first_difference(made[5:12]) == -1  # a batch polled with other bounds
    changed = [*made[:13], IncomingMessageEnvelope(SSP, "13", None, 1013), *made[14:]]
    assert recorded.first_difference(changed[10:]) == 3
    lettered = [IncomingMessageEnvelope(SSP, "a", None, "a"), IncomingMessageEnvelope(SSP, "b", None, "B")]
    assert recorded.first_difference(lettered) == 1
