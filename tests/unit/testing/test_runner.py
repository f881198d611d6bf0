"""TestRunner as promised to users, also from inside a running event loop."""

from __future__ import annotations

import asyncio
import gc
import os
import tempfile
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.control.messages import WatermarkMessage
from samza_nb.errors import JobTimeoutError
from samza_nb.testing import Message, TestRunner, Watermark

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


def test_a_watermark_item_is_an_envelope_of_its_own_that_a_low_level_task_sees_as_a_message() -> None:
    seen: list[tuple[str, Any]] = []

    class Recording:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            seen.append((envelope.offset, envelope.message))

    TestRunner.of(Recording).add_input("in", ["a", Watermark(5), Message("b", timestamp=7)]).run()
    assert seen == [("0", "a"), ("1", WatermarkMessage(timestamp=5)), ("2", "b")]
    assert WatermarkMessage(timestamp=5).task_name is None


class Counting:
    """Counts messages in a DuckDB store; outputs the running count."""

    def init(self, context: Any) -> None:
        self.store = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        count = (self.store.get("n") or 0) + 1
        self.store.put("n", count)
        collector.send(OutgoingMessageEnvelope(OUT, count))


STORE = {
    "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.counts.key.serde": "string",
    "stores.counts.msg.serde": "long",
}


def test_each_runner_keeps_its_stores_in_a_directory_of_its_own(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)  # the default job.logged.store.base.dir is relative to it
    runs = [TestRunner.of(Counting).add_input("in", [1, 2]).add_output("out").add_config(STORE) for _ in "ab"]
    first, second = (runner.run().output("out") for runner in runs)
    assert first == second == {0: [1, 2]}  # the second runner did not see the first one's state
    state_dir = runs[0].config()["job.logged.store.base.dir"]
    assert not (tmp_path / ".samza_nb").exists() and state_dir.startswith(tempfile.gettempdir())
    del runs, first, second
    gc.collect()
    assert not os.path.exists(state_dir)


def test_a_configured_state_directory_is_kept_across_runners(tmp_path: Any) -> None:
    config = {**STORE, "job.logged.store.base.dir": str(tmp_path)}
    TestRunner.of(Counting).add_input("in", [1, 2]).add_output("out").add_config(config).run()
    assert any(tmp_path.iterdir())  # the state file stayed where configured
    runner = TestRunner.of(Counting).add_input("in", [1, 2, 3]).add_output("out").add_config(config)
    assert runner.config()["job.logged.store.base.dir"] == str(tmp_path)


def test_a_container_run_cancelled_by_task_code_at_init_fails_the_run_instead_of_passing() -> None:
    """Task code that cancels the Task it runs on during init (before the loop's own guard) must not make an
    unfinished run look like a finished one: nothing was processed."""

    class CancelsAtInit:
        def init(self, context: Any) -> None:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()

        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            collector.send(OutgoingMessageEnvelope(SystemStream("test", "out"), envelope.message))

    runner = TestRunner.of(CancelsAtInit).add_input("in", [1, 2, 3]).add_output("out")
    with pytest.raises(SamzaError, match="container 0 .*cancelled"):
        runner.run(timeout=60)
