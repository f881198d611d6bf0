"""The public names are a promise to users and to tests outside the project: pinned here."""

from __future__ import annotations

import samza_nb
import samza_nb.chooser
import samza_nb.testing

EXPECTED = {
    "END_OF_STREAM_OFFSET",
    "AsyncStreamTask",
    "ClosableTask",
    "Config",
    "ConfigError",
    "EndOfStreamListenerTask",
    "IncomingMessageEnvelope",
    "InitableTask",
    "MessageCollector",
    "OutgoingMessageEnvelope",
    "RequestScope",
    "SamzaError",
    "StreamTask",
    "SystemStream",
    "SystemStreamPartition",
    "TaskCallback",
    "TaskContext",
    "TaskCoordinator",
    "TaskFailedError",
    "WindowableTask",
}


def test_all_is_exactly_the_promised_names_each_once() -> None:
    assert len(samza_nb.__all__) == len(set(samza_nb.__all__))
    assert set(samza_nb.__all__) == EXPECTED
    for name in samza_nb.__all__:
        assert getattr(samza_nb, name) is not None


def test_testing_exports_the_test_runner() -> None:
    assert {"TestRunner", "Message"} <= set(samza_nb.testing.__all__)
    assert samza_nb.testing.TestRunner.__test__ is False


def test_testing_exports_the_loop_modes() -> None:
    assert {"LOOP_MODES", "LoopMode"} <= set(samza_nb.testing.__all__)
    modes = samza_nb.testing.LOOP_MODES
    assert [str(mode) for mode in modes] == ["inline", "observed", "thread_pool", "concurrency_3"]
    assert all(isinstance(mode, samza_nb.testing.LoopMode) for mode in modes)


def test_every_deliberate_error_derives_from_samza_error() -> None:
    from samza_nb import errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), samza_nb.SamzaError)


def test_ssps_are_frozen_hashable_ordered_and_interned() -> None:
    import copy
    import pickle

    import pytest

    a = samza_nb.SystemStreamPartition("kafka", "views", 2)
    b = samza_nb.SystemStreamPartition("kafka", "views", 2)
    assert a is b and a == b and hash(a) == hash(b)
    assert samza_nb.SystemStreamPartition("kafka", "views", 1) < a
    assert a.system_stream == samza_nb.SystemStream("kafka", "views")
    assert pickle.loads(pickle.dumps(a)) is a and copy.deepcopy(a) is a
    with pytest.raises(AttributeError):
        a.partition = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        samza_nb.SystemStreamPartition("kafka", "views", -1)


def test_envelopes_know_end_of_stream() -> None:
    ssp = samza_nb.SystemStreamPartition("s", "t", 0)
    assert samza_nb.IncomingMessageEnvelope.end_of_stream(ssp).is_end_of_stream
    assert not samza_nb.IncomingMessageEnvelope(ssp, "0", None, 1).is_end_of_stream


def test_a_subscriber_of_rare_events_leaves_the_per_message_path_alone() -> None:
    from samza_nb.observe import Committed, EventBus, ProcessStarted

    bus = EventBus()
    seen: list[object] = []
    unsubscribe = bus.subscribe(seen.append, events=[Committed])
    assert bus.active and not bus.per_message
    bus.publish(ProcessStarted(0.0, "t", samza_nb.SystemStreamPartition("s", "x", 0), "0", 1))
    assert seen == []
    everything = bus.subscribe(lambda event: None)
    assert bus.per_message
    everything()
    unsubscribe()
    assert not bus.active and not bus.per_message
