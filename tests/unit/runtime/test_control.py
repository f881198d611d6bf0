"""LocalJobRunner steers its job (docs/architecture.md §3 rule 13): pause, step, resume, set and swap from
another thread while ``run()`` runs on its own, and before the run and after it (in-memory system, DuckDB
stores)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.observe.states import ContainerState
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.runtime import LocalJobRunner, Step
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually

OUT = SystemStream("mem", "out")


class Tagger:
    tag = "old"

    def init(self, context: Any) -> None:
        self.store = context.get_store("seen")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.store.put(envelope.offset, self.tag)
        collector.send(OutgoingMessageEnvelope(OUT, f"{self.tag}:{envelope.offset}"))


class NewTagger(Tagger):
    tag = "new"


class Setup:
    """A job over stream "in" of a private in-memory namespace, with a DuckDB store "seen"."""

    def __init__(self, tmp_path: Path) -> None:
        namespace = f"control-{uuid.uuid4().hex}"
        self.broker = InMemoryBroker.named(namespace, "mem")
        self.broker.create_stream("in", 1)
        self.config = Config(
            {
                "job.name": "steered",
                "task.inputs": "mem.in",
                "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
                "systems.mem.inmemory.namespace": namespace,
                "systems.mem.samza.offset.default": "oldest",
                "job.logged.store.base.dir": str(tmp_path / "state"),
                "stores.seen.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
                "stores.seen.key.serde": "string",
                "stores.seen.msg.serde": "string",
            }
        )

    def send(self, count: int, start: int = 0) -> None:
        for i in range(start, start + count):
            self.broker.send("in", f"m{i}")

    def outputs(self) -> list[str]:
        return [str(value) for values in self.broker.read("out").values() for value in values]


class Background:
    def __init__(self, runner: LocalJobRunner) -> None:
        self.runner = runner
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.runner.run(timeout=60)
        except BaseException as exc:
            self.error = exc

    def running(self) -> Background:
        eventually(
            lambda: (
                self.runner.container is not None and self.runner.container.state is ContainerState.RUNNING
            )
        )
        return self

    def join(self) -> None:
        self.thread.join(60)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error


def buffered(runner: LocalJobRunner) -> int:
    assert runner.container is not None
    consumers = runner.container._consumers
    return sum(len(b) for b in consumers.buffers.values()) if consumers is not None else 0


def test_pause_and_resume_from_another_thread_while_run_runs(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = LocalJobRunner(setup.config, Tagger)
    job = Background(runner).running()
    setup.send(100)
    eventually(lambda: runner.processed == 100)
    runner.pause()
    setup.send(50, start=100)
    eventually(lambda: buffered(runner) > 0, message="the paused job fetched the new input")
    assert runner.processed == 100
    runner.resume()
    eventually(lambda: runner.processed == 150)
    runner.stop()
    job.join()
    assert len(setup.outputs()) == 150


def test_a_job_paused_before_its_run_starts_paused_and_steps(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    setup.send(4)
    runner = LocalJobRunner(setup.config, Tagger)
    runner.pause()
    assert runner.set(task_max_concurrency=2)["task.max.concurrency"] == "2"
    job = Background(runner).running()
    steps = runner.step(2)
    assert [step.offset for step in steps] == ["0", "1"] and all(isinstance(s, Step) for s in steps)
    assert steps[0].writes == (("seen", "0", None, "old"),)
    assert runner.processed == 2
    runner.swap(NewTagger)
    runner.resume()
    eventually(lambda: runner.processed == 4)
    runner.stop()
    job.join()
    assert setup.outputs() == ["old:0", "old:1", "new:2", "new:3"]
    with pytest.raises(SamzaError, match="has ended"):
        runner.pause()
    with pytest.raises(SamzaError, match="has ended"):
        runner.swap(Tagger)


def test_step_before_the_start_and_set_with_bad_keys_are_refused(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    runner = LocalJobRunner(setup.config, Tagger)
    with pytest.raises(SamzaError, match=r"has not started.*step\(\)"):
        runner.step()
    with pytest.raises(
        ConfigError, match=r"job\.name cannot change.*task\.max\.concurrency, task\.commit\.ms"
    ):
        runner.set({"job.name": "other"})
    with pytest.raises(
        ConfigError, match=r"^unknown key task_max_concurency: did you mean task\.max\.concurrency\?"
    ):
        runner.set(task_max_concurency=2)
    with pytest.raises(ConfigError, match=r"task\.window\.ms.*'soon'"):
        runner.set({"task.window.ms": "soon"})


# -- swapping an application --------------------------------------------------------------------------------
def count_app(step: int, extra_filter: bool = False) -> type[StreamApplication]:
    """Counts messages per first letter in a processing-time window of an hour (it fires at end of
    stream), each message adding ``step``; ``extra_filter`` adds an op (another shape)."""

    class Counting(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            stream = app.get_input_stream("in")
            if extra_filter:
                stream = stream.filter(lambda m: True, op_id="keep")
            (
                stream.window(
                    Windows.tumbling(
                        3_600_000,
                        lambda: 0,
                        lambda m, acc: acc + step,
                        key_fn=lambda m: m[0],
                        time="processing",
                    ),
                    "counts",
                )
                .map(lambda pane: f"{pane.key}={pane.value}")
                .send_to(app.get_output_stream("out"))
            )

    Counting.__qualname__ = f"Counting{step}"
    return Counting


def test_an_application_swaps_in_one_of_the_same_shape_keeping_its_window_state(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    config = setup.config.with_overrides({"job.default.system": "mem"})
    runner = LocalJobRunner(config, count_app(1))
    runner.pause()
    job = Background(runner).running()
    setup.send(3)
    runner.step(3)
    with pytest.raises(SamzaError, match=r"does not keep the running application's shape.*op 'keep' is new"):
        runner.swap(count_app(100, extra_filter=True))
    with pytest.raises(SamzaError, match="like with like"):
        runner.swap(Tagger)
    runner.swap(count_app(100))
    setup.send(2, start=3)
    runner.resume()
    eventually(lambda: runner.processed == 5)
    setup.broker.end_stream("in")
    job.join()
    assert setup.outputs() == ["m=203"], "3 counted by the old code, 2 by the new, in one pane"
