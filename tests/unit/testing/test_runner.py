"""TestRunner as promised to users, also from inside a running event loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.errors import JobTimeoutError
from samza_nb.testing import Message, TestRunner

OUT = SystemStream("test", "out")


class Upper:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(
            OutgoingMessageEnvelope(
                OUT, (envelope.key, envelope.message.upper(), envelope.timestamp), key=envelope.key
            )
        )


def test_outputs_and_checkpoints() -> None:
    result = (
        TestRunner.of(Upper)
        .add_input("in", [Message("a", key="k", timestamp=5), "b"])
        .add_output("out", partitions=1)
        .run(timeout=10)
    )
    assert result.output("out") == {0: [("k", "A", 5), (None, "B", None)]}
    assert {str(s): o for s, o in result.checkpoints["Partition 0"].items()} == {"test.in#0": "1"}


def test_task_instances_and_factories() -> None:
    shared = Upper()
    for task in (Upper, lambda: Upper(), shared):
        result = TestRunner.of(task).add_input("in", ["x"]).add_output("out").run()
        assert result.output("out")[0][0][1] == "X"


def test_not_a_task_is_refused() -> None:
    with pytest.raises(SamzaError, match="not a task"):
        TestRunner.of(42)


def test_a_runner_needs_an_input() -> None:
    with pytest.raises(SamzaError, match="add_input"):
        TestRunner.of(Upper).run()


def test_run_works_inside_a_running_event_loop() -> None:
    async def notebook_cell() -> dict[int, list[Any]]:
        return TestRunner.of(Upper).add_input("in", ["q"]).add_output("out").run().output("out")

    assert asyncio.run(notebook_cell())[0][0][1] == "Q"


def test_run_async_on_the_current_loop() -> None:
    async def main() -> Any:
        return await TestRunner.of(Upper).add_input("in", ["z"]).add_output("out").run_async()

    assert asyncio.run(main()).output("out")[0][0][1] == "Z"


def test_a_job_that_never_ends_times_out_with_a_clear_error() -> None:
    class Stuck:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            pass

    with pytest.raises(JobTimeoutError, match="did not finish within 0.3 s"):
        TestRunner.of(Stuck).add_input("in", [1]).add_config({"task.shutdown.ms": "10"}).run(timeout=0.3)


def test_keys_partition_outputs_stably() -> None:
    class Keyed:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message, key=envelope.message))

    words = ["apple", "kiwi", "plum", "fig", "apple", "kiwi"]
    first = TestRunner.of(Keyed).add_input("in", words).add_output("out", partitions=3).run().output("out")
    second = TestRunner.of(Keyed).add_input("in", words).add_output("out", partitions=3).run().output("out")
    assert first == second
    for values in first.values():
        for word in values:
            assert all(word not in other for other in first.values() if other is not values)


def test_multi_partition_inputs_from_a_dict() -> None:
    result = TestRunner.of(Upper).add_input("in", {0: ["a"], 2: ["c"]}).add_output("out").run()
    assert set(result.checkpoints) == {"Partition 0", "Partition 1", "Partition 2"}
    assert sorted(v[1] for v in result.output("out")[0]) == ["A", "C"]
