"""What the monitor shows of a real container over the in-memory system (issue 15, items 3, 4, 7, 9):
backlogs before an ``upcoming`` start, lag from the start, counts per partition and stream, the oldest
message in flight, batches, fair decision samples, merged checkpoints, phases after the end, rates."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.container.container import SamzaContainer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.notebook.display.dashboard_html import body_html, header_html
from samza_nb.notebook.display.monitor import Monitor
from samza_nb.notebook.display.text_status import render_text
from samza_nb.notebook.display.view_rows import (
    PARTITION_HEADERS,
    TIMES,
    commit_rows,
    decision_rows,
    header_line,
    partition_rows,
    task_rows,
)
from samza_nb.notebook.display.views import JobView
from samza_nb.observe import events as ev
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import aeventually


@pytest.fixture
def broker() -> Iterator[InMemoryBroker]:
    namespace = f"jv-{uuid.uuid4().hex[:8]}"
    yield InMemoryBroker.named(namespace)
    InMemoryBroker.drop(namespace)


def job_config(broker: InMemoryBroker, *inputs: str, oldest: bool = True, **extra: object) -> Config:
    system = broker.namespace
    values = {
        "job.name": "views",
        "task.inputs": ",".join(f"{system}.{stream}" for stream in inputs),
        f"systems.{system}.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
    }
    if oldest:
        values[f"systems.{system}.samza.offset.default"] = "oldest"
    values.update({key.replace("__", "-").replace("_", "."): str(value) for key, value in extra.items()})
    return Config(values)


def fill(broker: InMemoryBroker, stream: str, partitions: int, count: int, *, end: bool = True) -> None:
    broker.create_stream(stream, partitions)
    for i in range(count):
        broker.send(stream, i, partition=i % partitions)
    if end:
        broker.end_stream(stream)


class Pass:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class Holding:
    """Holds every callback (class-level list, reset by the test) until the test completes it."""

    held: list[Any] = []

    def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
        Holding.held.append(callback)


def monitored(
    config: Config, factory: Callable[[], Any] = Pass, **kwargs: Any
) -> tuple[SamzaContainer, Monitor]:
    container = SamzaContainer(config, factory, planner=plan_job_model)
    kwargs.setdefault("refresh_s", 0.01)
    return container, Monitor(container, job="views", mode="test", **kwargs)


async def run_to_end(
    container: SamzaContainer, monitor: Monitor, during: Callable[[], Any] | None = None
) -> JobView:
    monitor.start()
    job = asyncio.ensure_future(container.run())
    error: str | None = None
    if during is not None:
        try:
            await during()
        except BaseException:
            container.shutdown()
            for callback in Holding.held:
                if not callback.is_done:
                    callback.complete()
            await asyncio.wait([job], timeout=10)
            raise
    try:
        await job
    except Exception as exc:
        error = str(exc)
    outcome = "failed" if error else ("stopped" if container._stop_requested else "finished")
    return await monitor.finish(outcome, error)


# -- item 3: silent nothing ----------------------------------------------------------------------------
def test_messages_before_an_upcoming_start_are_named(broker: InMemoryBroker) -> None:
    fill(broker, "clicks", 2, 519)
    container, monitor = monitored(job_config(broker, "clicks", oldest=False))
    view = asyncio.run(run_to_end(container, monitor))
    system = broker.namespace
    note = (
        f"519 messages before the start of {system}.clicks: set systems.{system}.samza.offset.default = "
        "oldest to read them"
    )
    assert view.processed == 0
    assert note in view.notes
    assert note in header_html(view)
    assert note in render_text(view)
    # Nothing processed, started at upcoming: the position is the offset before the start, lag 0.
    assert [p.lag for p in view.partitions] == [0, 0]


def test_one_message_before_the_start_is_singular(broker: InMemoryBroker) -> None:
    fill(broker, "one", 1, 1)
    container, monitor = monitored(job_config(broker, "one", oldest=False))
    view = asyncio.run(run_to_end(container, monitor))
    assert any(
        note.startswith(f"1 message before the start of {broker.namespace}.one:") for note in view.notes
    )


def test_no_note_when_the_job_reads_from_the_oldest_offset(broker: InMemoryBroker) -> None:
    fill(broker, "clicks", 1, 10)
    container, monitor = monitored(job_config(broker, "clicks"))
    view = asyncio.run(run_to_end(container, monitor))
    assert view.processed == 10
    assert not any("before the start" in note for note in view.notes)


def test_lag_counts_from_the_start_before_anything_is_processed(broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 519, end=False)
    Holding.held = []
    container, monitor = monitored(job_config(broker, "in", task_callback_timeout_ms=-1), Holding)

    async def during() -> None:
        await aeventually(lambda: Holding.held, timeout=10)
        # One message in flight, none released: the position is the offset before the start (-1).
        view = await aeventually(
            lambda: monitor.view if monitor.view.partitions and monitor.view.partitions[0].head else None,
            timeout=10,
        )
        assert view.partitions[0].processed_offset is None
        assert view.partitions[0].lag == 519
        container.shutdown()
        while Holding.held:
            Holding.held.pop(0).complete()
            await asyncio.sleep(0)

    asyncio.run(run_to_end(container, monitor, during))


def test_heads_follow_the_stream_with_every_view(broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 5, end=False)
    container, monitor = monitored(job_config(broker, "in"), refresh_s=0.02)
    views: list[JobView] = []
    monitor.listeners.append(views.append)

    async def during() -> None:
        await aeventually(
            lambda: monitor.view.partitions and monitor.view.partitions[0].head == "4", timeout=10
        )
        before = len(views)
        broker.send("in", "more", partition=0)
        await aeventually(lambda: monitor.view.partitions[0].head == "5", timeout=10)
        # The head is asked for at every tick (when the previous ask finished), not once a second.
        assert len(views) - before <= 4, len(views) - before
        container.shutdown()

    asyncio.run(run_to_end(container, monitor, during))


def test_processed_is_a_count_and_the_offset_column_is_last_offset(broker: InMemoryBroker) -> None:
    fill(broker, "in", 2, 100)
    container, monitor = monitored(job_config(broker, "in"))
    view = asyncio.run(run_to_end(container, monitor))
    assert PARTITION_HEADERS[:3] == ("partition", "processed", "last offset")
    assert [p.processed for p in view.partitions] == [50, 50]
    assert [p.processed_offset for p in view.partitions] == ["49", "49"]
    rows = partition_rows(view)
    system = broker.namespace
    assert rows[0][:2] == (f"{system}.in (2 partitions)", "100")  # the stream's total first
    assert rows[1][:3] == (f"{system}.in#0", "50", "49")


def test_tasks_read_stopped_after_a_stop_and_failed_after_a_failure(broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 3, end=False)
    container, monitor = monitored(job_config(broker, "in"))

    async def stop() -> None:
        await aeventually(lambda: monitor.view.processed == 3, timeout=10)
        container.shutdown()

    view = asyncio.run(run_to_end(container, monitor, stop))
    assert [t.phase for t in view.tasks] == ["stopped"]

    class Boom:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            raise KeyError("no user")

    fill(broker, "bad", 1, 3, end=False)
    container, monitor = monitored(job_config(broker, "bad"), Boom)
    view = asyncio.run(run_to_end(container, monitor))
    assert view.state == "failed"
    assert [t.phase for t in view.tasks] == ["failed"]


# -- item 4: the low watermark ---------------------------------------------------------------------------
def test_the_oldest_message_in_flight_and_the_checkpoint_beside_it(broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 10, end=False)
    Holding.held = []
    config = job_config(broker, "in", task_max_concurrency=4, task_callback_timeout_ms=-1)
    container, monitor = monitored(config, Holding)
    system = broker.namespace

    async def during() -> None:
        await aeventually(lambda: len(Holding.held) == 4, timeout=10)
        first = Holding.held[0]
        for callback in Holding.held[1:]:
            callback.complete()  # completed, but offset 0 still holds the watermark back
        view = await aeventually(
            lambda: monitor.view if monitor.view.tasks and monitor.view.tasks[0].in_flight == 4 else None,
            timeout=10,
        )
        task = view.tasks[0]
        assert task.oldest_in_flight is not None
        assert (str(task.oldest_in_flight.ssp), task.oldest_in_flight.offset) == (f"{system}.in#0", "0")
        age = task.oldest_in_flight.age_ms
        assert age >= 0
        later = await aeventually(
            lambda: (
                monitor.view.tasks[0].oldest_in_flight.age_ms > age  # type: ignore[union-attr]
                and monitor.view
            ),
            timeout=10,
        )
        assert later.tasks[0].peak_in_flight == 4
        row = task_rows(later)[0]
        assert row[2] == "4/4"  # the peak against task.max.concurrency
        assert row[4].startswith(f"{system}.in#0@0 (") and row[4].endswith(" ms)")
        assert row[5] == "—"  # no checkpoint yet
        assert f"{system}.in#0@0" in body_html(later)
        first.complete()  # the watermark moves on to the next message not completed (offset 4)
        await aeventually(
            lambda: (oldest := monitor.view.tasks[0].oldest_in_flight) is not None and oldest.offset == "4",
            timeout=10,
        )
        container.shutdown()
        while Holding.held:
            Holding.held.pop(0).complete()
            await asyncio.sleep(0)

    view = asyncio.run(run_to_end(container, monitor, during))
    assert view.tasks[0].peak_in_flight == 4


def test_a_batch_shows_its_position(broker: InMemoryBroker) -> None:
    fill(broker, "in", 2, 4000)
    container, monitor = monitored(job_config(broker, "in", task_consumer_batch_size=100))
    reasons: list[str] = []
    container.bus.subscribe(
        lambda e: reasons.append(
            __import__("samza_nb.notebook.display.monitor", fromlist=["x"]).decision_reason(e.trace)  # type: ignore[attr-defined]
        ),
        [ev.ChooserDecision],
        sampled=True,
    )
    asyncio.run(run_to_end(container, monitor))
    batched = [r for r in reasons if r.startswith("continues a batch: ")]
    assert batched, reasons
    assert all(re.fullmatch(r"continues a batch: \d+ of 100", r) for r in batched), batched


def test_a_traced_batch_shows_its_position(broker: InMemoryBroker) -> None:
    fill(broker, "in", 2, 300)
    container, monitor = monitored(job_config(broker, "in", task_consumer_batch_size=100), trace_all=True)
    asyncio.run(run_to_end(container, monitor))
    reasons = [
        t.batch_position for d in monitor.decisions if (t := d.trace) is not None and t.held_by_batching
    ]
    assert reasons and max(p or 0 for p in reasons) == 100
    from samza_nb.notebook.display.monitor import decision_reason

    assert any(decision_reason(d.trace).startswith("continues a batch: 37 of 100") for d in monitor.decisions)


def test_decisions_are_sampled_fairly_over_partitions(broker: InMemoryBroker) -> None:
    fill(broker, "in", 32, 64_000)
    container, monitor = monitored(job_config(broker, "in"))
    seen: set[int] = set()
    container.bus.subscribe(lambda e: seen.add(e.ssp.partition), [ev.ChooserDecision], sampled=True)  # type: ignore[attr-defined]
    asyncio.run(run_to_end(container, monitor))
    assert len(seen) >= 8, sorted(seen)


def test_a_sampled_decision_is_kept_when_its_reason_changes() -> None:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.chooser.trace import ChoiceTrace
    from samza_nb.notebook.display.monitor import DECISION_SPACING_MS

    monitor = object.__new__(Monitor)
    monitor._trace_all = False  # type: ignore[attr-defined]
    monitor._last_decision = None  # type: ignore[attr-defined]
    from collections import deque

    monitor._recent_decisions = deque(maxlen=12)  # type: ignore[attr-defined]
    ssp = SystemStreamPartition("s", "in", 0)
    start = ChoiceTrace(ssp, "0", None, (), False, False, (), 1, 100)
    batch = ChoiceTrace(ssp, "1", None, (), False, True, (), 2, 100)
    monitor._on_decision(ev.ChooserDecision(0.0, ssp, "0", start))  # type: ignore[attr-defined]
    monitor._on_decision(ev.ChooserDecision(DECISION_SPACING_MS / 10, ssp, "1", batch))  # type: ignore[attr-defined]
    assert len(monitor._recent_decisions) == 2  # type: ignore[attr-defined]


def test_no_tier_label_for_tiers_nobody_configured(broker: InMemoryBroker) -> None:
    fill(broker, "events", 1, 50)
    fill(broker, "table", 1, 50)
    system = broker.namespace
    config = job_config(
        broker, "events", "table", **{f"systems.{system}.streams.table.samza.bootstrap": "true"}
    )
    container, monitor = monitored(config, trace_all=True)
    view = asyncio.run(run_to_end(container, monitor))
    assert view.decisions
    assert all(d.tier is None and "priority tier" not in d.reason for d in view.decisions)
    assert all(row[2] == "—" for row in decision_rows(view))

    fill(broker, "high", 1, 20)
    config = job_config(broker, "events", "high", **{f"systems.{system}.streams.high.samza.priority": "5"})
    container, monitor = monitored(config, trace_all=True)
    view = asyncio.run(run_to_end(container, monitor))
    assert any("priority tier 5" in d.reason for d in view.decisions)


def test_identical_consecutive_checkpoints_merge_into_one_row(broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 5, end=False)
    container, monitor = monitored(job_config(broker, "in", task_commit_ms=5))

    async def during() -> None:
        await aeventually(lambda: monitor.view.commit_count >= 5 and monitor.view.processed == 5, timeout=10)
        await aeventually(lambda: any(c.count >= 3 for c in monitor.view.commits), timeout=10)
        container.shutdown()

    view = asyncio.run(run_to_end(container, monitor, during))
    merged = [row for row in commit_rows(view) if TIMES in row[1]]
    assert merged, commit_rows(view)
    assert re.fullmatch(rf"Partition 0 {TIMES}\d+", merged[0][1])
    assert len(view.commits) < view.commit_count


# -- item 7: scale ---------------------------------------------------------------------------------------
def test_a_wide_job_has_collapsible_bounded_sections_and_stream_totals(broker: InMemoryBroker) -> None:
    for stream in ("a", "b", "c"):
        fill(broker, stream, 32, 320)
    container, monitor = monitored(job_config(broker, "a", "b", "c", job_container_count=1))
    view = asyncio.run(run_to_end(container, monitor))
    body = body_html(view)
    assert "<details class='samza-section' open><summary>" in body  # small sections open
    partitions = body[body.index("samza-partitions") :]
    assert partitions.index("<details class='samza-section'><summary>") < 80  # the long table closed
    assert "max-height:" in body and "overflow:auto" in body
    # While the job runs every section stays open: a render would fold again what the user opened.
    running = body_html(dataclasses.replace(view, done=False))
    assert "<details class='samza-section'><summary>" not in running
    assert "white-space:nowrap" in body
    system = broker.namespace
    rows = partition_rows(view)
    totals = [row for row in rows if "partitions)" in row[0]]
    assert [row[0] for row in totals] == [f"{system}.{s} (32 partitions)" for s in ("a", "b", "c")]
    assert all(row[1] == "320" for row in totals)
    assert rows.index(totals[1]) == 33  # each total before its stream's partitions


# -- item 9: the header's rate ---------------------------------------------------------------------------
def test_the_rate_keeps_its_meaning_while_running_and_at_the_end() -> None:
    running = JobView("j", "test", "running", processed=7800, elapsed_s=2.0, rate=4100.0)
    assert "4,100 msg/s now" in header_line(running) and "avg 3,900 msg/s" in header_line(running)
    assert "4,100 msg/s now" in header_html(running) and "avg 3,900 msg/s" in header_html(running)
    done = JobView("j", "test", "finished", processed=7800, elapsed_s=2.0, rate=4100.0, done=True)
    assert "avg 3,900 msg/s" in header_line(done) and "now" not in header_line(done)
    assert "avg 3,900 msg/s" in header_html(done) and "now" not in header_html(done)
