"""Decision traces: what was chosen, among which candidates, and which layer shaped it."""

from __future__ import annotations

import json

from samza_nb.api.streams import SystemStream
from samza_nb.chooser import (
    ChoiceTrace,
    DefaultChooser,
    RoundRobinChooser,
    SSPMetadata,
    TracingChooser,
)
from samza_nb.config import Config

from .support import envelope

boot0 = envelope("boot", 0, "0", "boot0")
boot1 = envelope("boot", 0, "1", "boot1")
boot2 = envelope("boot", 0, "2", "boot2")
high0 = envelope("high", 0, "0", "high0")
low0 = envelope("low", 0, "0", "low0")
low1 = envelope("low", 0, "1", "low1")
BOOT = SystemStream("kafka", "boot")
CONFIG = Config(
    {
        "task.inputs": "kafka.boot,kafka.high,kafka.low",
        "task.consumer.batch.size": "2",
        "systems.kafka.streams.boot.samza.bootstrap": "true",
        "systems.kafka.streams.high.samza.priority": "1",
    }
)
METADATA = {boot0.ssp: SSPMetadata("0", "1", "2")}


def started(chooser: DefaultChooser) -> DefaultChooser:
    for ssp in (boot0.ssp, high0.ssp, low0.ssp):
        chooser.register(ssp, "0")
    chooser.start()
    return chooser


def test_tracing_off_adds_nothing_per_message() -> None:
    chooser = started(DefaultChooser.from_config(CONFIG, METADATA))
    assert not chooser.trace_enabled
    # The DefaultChooser's per-message methods are the outermost layer's own.
    assert chooser.update == chooser.composed.update
    assert chooser.choose == chooser.composed.choose
    chooser.update(boot0)
    assert chooser.choose() is boot0
    assert chooser.last_choice is None


def test_trace_of_a_full_composition() -> None:
    chooser = started(DefaultChooser.from_config(CONFIG, METADATA, trace=True))
    assert chooser.trace_enabled
    assert chooser.choose() is None
    assert chooser.last_choice == ChoiceTrace(None, None, None, (), True, False, (BOOT,))

    # Withheld: low and high are waiting, the bootstrap stream has nothing waiting.
    chooser.update(low0)
    chooser.update(high0)
    assert chooser.choose() is None
    trace = chooser.last_choice
    assert trace is not None
    assert trace.withheld and trace.gated_by_bootstrap
    assert trace.candidates == ((low0.ssp, 0), (high0.ssp, 1))
    assert trace.lagging_streams == (BOOT,)

    # Chosen under bootstrap gating, by priority.
    chooser.update(boot0)
    assert chooser.choose() is boot0
    trace = chooser.last_choice
    assert trace is not None
    assert (trace.ssp, trace.offset, trace.tier) == (boot0.ssp, "0", 2)
    assert trace.candidates == ((low0.ssp, 0), (high0.ssp, 1), (boot0.ssp, 2))
    assert trace.gated_by_bootstrap and not trace.held_by_batching and not trace.withheld

    # The next envelope of the batched partition is held by batching; it catches the stream up.
    chooser.update(boot1)
    assert chooser.choose() is boot1
    trace = chooser.last_choice
    assert trace is not None
    assert trace.held_by_batching and trace.gated_by_bootstrap
    assert trace.candidates == ((low0.ssp, 0), (high0.ssp, 1), (boot0.ssp, 2))

    # Bootstrapping over: by priority, not gated, not batched.
    assert chooser.choose() is high0
    trace = chooser.last_choice
    assert trace is not None
    assert (trace.ssp, trace.tier, trace.gated_by_bootstrap, trace.held_by_batching) == (
        high0.ssp,
        1,
        False,
        False,
    )
    assert trace.lagging_streams == ()
    assert trace.candidates == ((low0.ssp, 0), (high0.ssp, 1))

    # The trace survives the bootstrapping layer becoming a pass-through.
    chooser.update(boot2)
    assert chooser.choose() is boot2
    assert chooser.last_choice is not None and chooser.last_choice.ssp == boot2.ssp
    assert chooser.choose() is low0
    chooser.update(low1)
    assert chooser.choose() is low1
    assert chooser.last_choice is not None and chooser.last_choice.held_by_batching
    assert chooser.choose() is None
    assert chooser.last_choice == ChoiceTrace(None, None, None, (), False, False)


def test_turning_tracing_off_restores_direct_calls() -> None:
    chooser = DefaultChooser.from_config(CONFIG, METADATA, trace=True)
    assert chooser.choose != chooser.composed.choose
    chooser.trace_enabled = False
    assert chooser.choose == chooser.composed.choose
    assert chooser.update == chooser.composed.update
    assert chooser.last_choice is None
    chooser.trace_enabled = True
    assert chooser.choose != chooser.composed.choose


def test_enabling_tracing_later_records_from_then_on() -> None:
    chooser = started(DefaultChooser.from_config(Config({})))
    chooser.update(low0)
    chooser.trace_enabled = True
    chooser.update(high0)
    assert chooser.choose() is low0
    trace = chooser.last_choice
    assert trace is not None and trace.ssp == low0.ssp
    # low0 was offered before tracing started, so only high0 is known as a candidate.
    assert trace.candidates == ((high0.ssp, None),)


def test_tracing_any_chooser() -> None:
    tracer = TracingChooser(RoundRobinChooser())
    tracer.start()
    tracer.update(low0)
    tracer.update(high0)
    assert tracer.choose() is low0
    assert tracer.last_choice == ChoiceTrace(
        low0.ssp, "0", None, ((low0.ssp, None), (high0.ssp, None)), False, False
    )
    tracer.stop()
    assert tracer.choose() is None


def test_trace_as_dict_is_json() -> None:
    chooser = started(DefaultChooser.from_config(CONFIG, METADATA, trace=True))
    chooser.update(boot0)
    chooser.choose()
    assert chooser.last_choice is not None
    data = json.loads(json.dumps(chooser.last_choice.as_dict()))
    assert data == {
        "ssp": "kafka.boot#0",
        "offset": "0",
        "tier": 2,
        "candidates": [["kafka.boot#0", 2]],
        "gated_by_bootstrap": True,
        "held_by_batching": False,
        "lagging_streams": ["kafka.boot"],
        "batch_position": 1,
        "batch_size": 2,
    }
