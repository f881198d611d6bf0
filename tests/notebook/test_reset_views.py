"""What the status and the dashboard say of an offset reset (issue 39, item 1): a line naming stream,
partition, from and to offsets; lag from the position actually consumed; a checkpoint past the head is
never shown as lag 0."""

from __future__ import annotations

import asyncio
from pathlib import Path

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.notebook.display.dashboard_html import header_html
from samza_nb.notebook.display.text_status import render_text
from samza_nb.notebook.display.views import PartitionView, offset_lag, reset_notes
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.log import LogSystemFactory
from tests.notebook.test_job_views import Pass, monitored, run_to_end

SSP = SystemStreamPartition("log", "in", 0)


def _config(root: Path) -> Config:
    return Config(
        {
            "job.name": "reset-views",
            "task.inputs": "log.in",
            "job.logged.store.base.dir": str(root / "state"),
            "systems.log.samza.factory": "samza_nb.systems.log.LogSystemFactory",
            "systems.log.log.dir": str(root / "log"),
            "systems.log.samza.offset.default": "oldest",
        }
    )


def _write(config: Config, count: int) -> None:
    async def go() -> None:
        producer = LogSystemFactory().get_producer("log", config)
        await producer.start()
        for i in range(count):
            producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "in"), b"m%d" % i, partition=0))
        await producer.stop()

    asyncio.run(go())


def test_the_dashboard_says_a_reset_happened_and_lags_from_the_new_position(tmp_path: Path) -> None:
    config = _config(tmp_path)
    _write(config, 31)
    LocalJobRunner(config, Pass, max_messages=31).run(timeout=30)  # checkpoint at 30
    (tmp_path / "log" / "in").rename(tmp_path / "old-in")  # the log recreated with 10 messages
    _write(config, 10)

    container, monitor = monitored(config, Pass)
    container._max_messages = 10
    view = asyncio.run(run_to_end(container, monitor))

    assert view.processed == 10
    (partition,) = view.partitions
    assert (partition.processed_offset, partition.committed, partition.lag) == ("9", "9", 0)
    line = (
        "offset reset: log.in#0: offset 31 is past the end of the log (next offset 10: the log is shorter "
        "than the checkpoint); reset to offset 0 (systems.log.samza.offset.default=oldest)"
    )
    assert line in view.notes
    assert line in header_html(view)
    assert line in render_text(view)
    (reset,) = container.status().resets
    assert (reset.ssp, reset.from_offset, reset.to_offset) == (SSP, "31", "0")


def test_a_reset_partition_lags_by_every_message_from_the_reset() -> None:
    # Reset to offset 0 of a partition whose head is 9, nothing processed yet: 10 messages to go.
    assert offset_lag("9", "-1", False, resumed=True) == 10


def test_a_checkpoint_past_the_head_is_not_lag_0() -> None:
    # The dashboard once showed committed 38 above head 25 and lag 0.
    assert offset_lag("25", "38", False, resumed=True) is None
    # Once the partition processed messages, a head sampled before the last of them still means caught up.
    assert offset_lag("25", "38", False) == 0
    ahead = PartitionView(SSP, "38", "38", "25", None, False)
    assert reset_notes((ahead,)) == (
        "log.in#0: checkpoint 38 is past the head 25 (the log was recreated or truncated?): lag unknown "
        "until its consumer resets it",
    )
    moving = PartitionView(SSP, "38", "38", "25", 0, False, processed=3)
    assert reset_notes((moving,)) == ()
