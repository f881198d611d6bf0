"""W4's baselines: the raw client loops of benchmarks/kafka_passthrough.py (one aiokafka consumer and
producer; librdkafka's ``Consumer.consume`` and ``Producer.produce``), run by the same harness."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import kafka_io
import workloads as w
from kafka_passthrough import aiokafka_loop, confluent_loop


def _aiokafka(p: w.Params) -> float:
    def copy(sink: str) -> float:
        return asyncio.run(
            aiokafka_loop(p.bootstrap, p.topic("W4"), sink, p.kafka_messages, p.partitions, "none")
        )

    return kafka_io.passthrough(p.bootstrap, p.topic("W4"), p.kafka_messages, p.partitions, copy)


def _confluent(p: w.Params) -> float:
    def copy(sink: str) -> float:
        return confluent_loop(p.bootstrap, p.topic("W4"), sink, p.kafka_messages, p.partitions, "none")

    return kafka_io.passthrough(p.bootstrap, p.topic("W4"), p.kafka_messages, p.partitions, copy)


AIOKAFKA: dict[str, Callable[[w.Params], float]] = {"W4": _aiokafka}
CONFLUENT: dict[str, Callable[[w.Params], float]] = {"W4": _confluent}
PACKAGES = ("aiokafka", "confluent-kafka")
UNSUPPORTED: dict[str, str] = {}
