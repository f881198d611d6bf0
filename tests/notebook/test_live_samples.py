"""Live samples in the monitor's JobViews: messages in and out of each task, and store tables after
commits; a real SamzaContainer over the in-memory system and a real DuckDB store."""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
from typing import Any

from samza_nb import OutgoingMessageEnvelope, SystemStreamPartition
from samza_nb.notebook.display.dashboard_html import body_html
from samza_nb.notebook.display.monitor import Monitor
from samza_nb.notebook.display.samplers import short, short_text
from samza_nb.notebook.display.views import JobView, MessageView, StoreTableView, TaskView
from samza_nb.observe import ChooserDecision, EventBus, MessageSent, MessageTaken
from tests.eventually import aeventually
from tests.unit.container.harness import OUT, Job

TD = "<td style='padding:0 8px;white-space:nowrap'>"
TH = "<th style='text-align:left;padding:0 8px;white-space:nowrap'>"


class Shout:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, {"shout": envelope.message.upper()}, key=envelope.key))


class AsyncShout:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, {"shout": envelope.message.upper()}, key=envelope.key))


class Pass:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class Count:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)


async def watch(job: Job, task: Any, until: Any, **monitor: Any) -> tuple[JobView, JobView]:
    """Run ``task`` with a Monitor on this loop until ``until(view)`` (which may feed the job); returns
    the view that satisfied it and the final view."""
    container = job.container(task)
    mon = Monitor(container, job="j", mode="here", refresh_s=0.01, **monitor)
    mon.start()
    run = asyncio.ensure_future(container.run())
    try:
        seen = await aeventually(lambda: until(mon.view) and mon.view, timeout=20)
    finally:
        container.shutdown()
        await asyncio.wait_for(run, 20)
    return seen, await mon.finish("stopped", None)


def keyed_feeder(job: Job, partitions: int) -> Any:
    counter = itertools.count()

    def feed() -> None:
        for p in range(partitions):
            n = next(counter)
            job.broker.send("in", f"word{n}", key=f"k{n}", partition=p)

    return feed


def both_directions_of_every_task(view: JobView, tasks: int) -> bool:
    kinds = {(m.task, m.direction) for m in view.messages}
    return len(kinds) == 2 * tasks


def test_messages_in_and_out_of_each_task_are_sampled() -> None:
    job = Job({"in": 2})
    job.broker.create_stream("out", 1)
    feed = keyed_feeder(job, 2)

    def until(view: JobView) -> bool:
        feed()  # a few messages per poll: the samples come from a live stream
        return both_directions_of_every_task(view, 2)

    seen, final = asyncio.run(watch(job, Shout, until))
    ins = [m for m in seen.messages if m.direction == "in"]
    outs = [m for m in seen.messages if m.direction == "out"]
    assert {m.task for m in ins} == {m.task for m in outs} == {"Partition 0", "Partition 1"}
    for m in ins:
        partition = m.task.split()[-1]
        assert m.where.startswith(f"test.in#{partition}@"), m.where
        assert m.key.startswith("'k") and m.value.startswith("'word")
    for m in outs:
        assert m.where == "test.out"
        assert m.key.startswith("'k") and m.value.startswith("{'shout': 'WORD")
    assert [m.at_s for m in seen.messages] == sorted((m.at_s for m in seen.messages), reverse=True)
    assert final.messages  # the final view keeps the last samples


def test_messages_sent_from_an_async_task_are_sampled() -> None:
    job = Job({"in": 1}, task__max__concurrency=4)
    job.broker.create_stream("out", 1)
    feed = keyed_feeder(job, 1)

    def until(view: JobView) -> bool:
        feed()
        return both_directions_of_every_task(view, 1)

    seen, _ = asyncio.run(watch(job, AsyncShout, until))
    assert any(m.direction == "out" and m.value.startswith("{'shout'") for m in seen.messages)


def test_a_few_messages_per_task_are_kept() -> None:
    job = Job({"in": 1})
    job.broker.create_stream("out", 1)
    feed = keyed_feeder(job, 1)

    def until(view: JobView) -> bool:
        feed()
        return len([m for m in view.messages if m.direction == "in"]) >= 10

    _, final = asyncio.run(watch(job, Shout, until))
    assert len([m for m in final.messages if m.direction == "in"]) == 10


def test_the_store_table_shows_the_committed_contents_after_each_commit(tmp_path: Path) -> None:
    job = Job(
        {"in": 1},
        task__commit__ms=20,
        stores__counts__factory="samza_nb.storage.duckdb.DuckDBStoreFactory",
        stores__counts__key__serde="string",
        stores__counts__msg__serde="long",
        job__logged__store__base__dir=str(tmp_path / "state"),
    )
    job.send("in", ["b", "a", "b"])
    sent_more = False

    def until(view: JobView) -> bool:
        nonlocal sent_more
        if not view.stores:
            return False
        (table,) = view.stores
        if not sent_more and table.total == 2:
            assert table.store == "counts" and table.columns == ("key", "value", "partition")
            assert table.rows == (("a", "1", "0"), ("b", "2", "0"))
            job.send("in", [f"w{i:02}" for i in range(12)])
            sent_more = True
        return sent_more and table.total == 14

    seen, final = asyncio.run(watch(job, Count, until))
    (table,) = seen.stores
    assert len(table.rows) == 10  # the first rows; the count says how many there are
    assert table.rows[:3] == (("a", "1", "0"), ("b", "2", "0"), ("w00", "1", "0"))
    assert table.at_s > 0
    assert final.stores[0].total == 14


def test_a_job_without_stores_has_no_store_tables() -> None:
    job = Job({"in": 1})
    job.send("in", ["x"])
    job.end()
    seen, final = asyncio.run(watch(job, Pass, lambda view: view.processed == 1))
    assert seen.stores == final.stores == ()


def test_short_text_is_cut_with_an_ellipsis() -> None:
    assert short("abc") == "'abc'"
    long = short("x" * 500)
    assert len(long) == 60 and long.endswith("…")
    assert len(short(list(range(10_000)))) <= 60
    assert short_text(None) == "—" and short_text("plain") == "plain"
    assert short_text("y" * 100) == "y" * 59 + "…"


def test_sampled_messages_do_not_turn_on_per_message_events() -> None:
    bus = EventBus()
    got: list[object] = []
    bus.subscribe(got.append, [MessageTaken, MessageSent])
    decisions: list[object] = []
    bus.subscribe(decisions.append, [ChooserDecision], sampled=True)
    assert bus.messages and bus.sampled and not bus.per_message
    taken = MessageTaken(1.0, "Partition 0", SystemStreamPartition("test", "in", 0), "3", "k", "v")
    bus.publish_sample(taken)  # to every subscriber of sampled messages, sampled or not
    assert got == [taken] and decisions == []


def test_the_dashboard_body_shows_the_sampled_messages_per_task_in_task_order() -> None:
    tasks = tuple(TaskView(f"Partition {p}", 0, 1, 0, "waiting", ()) for p in (2, 10))
    messages = (
        MessageView(1.5, "Partition 10", "out", "test.out", "'k2'", "{'v': 2}"),
        MessageView(1.25, "Partition 2", "in", "test.in#2@7", "'k1'", "'<b>'"),
        *(
            MessageView(1.0 - i / 100, "Partition 2", "in", f"test.in#2@{6 - i}", "None", "1")
            for i in range(7)
        ),
    )
    body = body_html(JobView("j", "here", "running", tasks=tasks, messages=messages))
    section_html = body[body.index("<div class='samza-messages'>") :]
    assert "messages in and out (sampled, newest first)" in section_html
    assert section_html.count("<tr>") == 1 + 6 + 1  # the headers, 6 of Partition 2's, 1 of Partition 10's
    assert section_html.index("Partition 2") < section_html.index("Partition 10")
    assert f"{TD}→ in</td>{TD}test.in#2@7</td>" in section_html
    assert f"{TD}out →</td>{TD}test.out</td>" in section_html
    assert "&#x27;&lt;b&gt;&#x27;" in section_html  # escaped
    assert "samza-messages" not in body_html(JobView("j", "here", "running", tasks=tasks))


def test_the_dashboard_body_shows_each_store_table() -> None:
    counts = StoreTableView("counts", 2.25, ("key", "value", "partition"), (("a", "1", "0"),), 14)
    single = StoreTableView("seen", 2.25, ("key", "value", "partition"), (("x", "—", "0"),), 1)
    body = body_html(JobView("j", "here", "running", stores=(counts, single)))
    stores = body[body.index("<div class='samza-stores'>") :]
    assert "store counts: 14 rows at the commit of 2.2 s, the first 1 shown" in stores
    assert "store seen: 1 row at the commit of 2.2 s</b>" in stores
    assert f"{TH}partition</th>" in stores
    assert f"{TD}a</td>{TD}1</td>" in stores
    assert "samza-stores" not in body_html(JobView("j", "here", "running"))


def test_the_container_stops_cleanly_while_a_store_query_runs(tmp_path: Path) -> None:
    job = Job(
        {"in": 1},
        stores__counts__factory="samza_nb.storage.duckdb.DuckDBStoreFactory",
        stores__counts__key__serde="string",
        stores__counts__msg__serde="long",
        job__logged__store__base__dir=str(tmp_path / "state"),
        task__commit__ms=20,
    )
    job.send("in", ["a"])
    slow = "SELECT count(*) AS n FROM counts, range(30000000) AS r(i) WHERE i % 7 = 3"

    async def main() -> Any:
        container = job.container(Count)
        run = asyncio.ensure_future(container.run())
        await aeventually(lambda: container.processed == 1 and job.commits())
        query = asyncio.ensure_future(container.query_store("counts", slow))
        storage = container._storage
        await aeventually(lambda: storage is not None and storage._queries == 1)
        container.shutdown()  # closing the stores waits for the query (DuckDB refuses to close under it)
        await asyncio.wait_for(run, 30)
        assert not query.done() or query.exception() is None
        return await query

    result = asyncio.run(main())
    assert (result.columns, result.rows) == (("n",), [(30000000 // 7,)])
