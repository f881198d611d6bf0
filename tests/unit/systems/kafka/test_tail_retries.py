"""The admin's tail read (systems/kafka/tail.py) retries what a leader election causes instead of failing
``get_metadata``. A leader election cannot be caused on the suite's one-node broker, so the broker's
answers are played by a stand-in client speaking the Fetch v11 response shape."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka import TopicPartition

from samza_nb.errors import SamzaError
from samza_nb.systems.kafka.tail import Tail, read_tails

NOT_LEADER, OFFSET_OUT_OF_RANGE, UNKNOWN_SERVER_ERROR = 6, 1, -1


class Cluster:
    def leader_for_partition(self, tp: TopicPartition) -> int:
        return 0


class Answer:
    """One Fetch v11 response for partition t-0: (partition, error, high watermark, last stable offset,
    log start, aborted transactions, preferred replica, records)."""

    API_VERSION = 11

    def __init__(self, error: int, log_start: int = 0) -> None:
        self.topics = [("t", [(0, error, 10, 10, log_start, None, -1, b"")])]


class Broker:
    """Answers each fetch with the next of ``answers`` (the last one repeats)."""

    cluster = Cluster()

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.fetches: list[Any] = []
        self.metadata_updates = 0

    async def send(self, node: int, request: Any) -> Answer:
        self.fetches.append(request)
        return self.answers[min(len(self.fetches), len(self.answers)) - 1]

    async def force_metadata_update(self) -> None:
        self.metadata_updates += 1


def tails(broker: Broker) -> dict[TopicPartition, Tail]:
    return asyncio.run(read_tails(broker, 0, {TopicPartition("t", 0): (0, 10)}))  # type: ignore[arg-type]


def test_a_leader_election_is_retried_after_a_metadata_refresh() -> None:
    broker = Broker(Answer(NOT_LEADER), Answer(0))
    assert tails(broker) == {TopicPartition("t", 0): Tail(10, None)}
    # the retry, then (no message in the last offset) the window widened to the log start
    assert len(broker.fetches) == 3 and broker.metadata_updates == 1


def test_a_leader_election_that_does_not_end_is_an_error_naming_the_partition() -> None:
    broker = Broker(Answer(NOT_LEADER))
    with pytest.raises(
        SamzaError, match=r"tail of Kafka partition t-0 at offset 9 failed: NotLeaderForPartition"
    ):
        tails(broker)
    assert len(broker.fetches) == 5


def test_a_window_whose_start_retention_removed_starts_at_the_new_log_start() -> None:
    broker = Broker(Answer(OFFSET_OUT_OF_RANGE, log_start=10), Answer(0))
    assert tails(broker) == {TopicPartition("t", 0): Tail(10, None)}
    assert len(broker.fetches) == 3 and broker.metadata_updates == 0


def test_other_errors_fail_at_once() -> None:
    broker = Broker(Answer(UNKNOWN_SERVER_ERROR))
    with pytest.raises(SamzaError, match="t-0 at offset 9 failed"):
        tails(broker)
    assert len(broker.fetches) == 1
