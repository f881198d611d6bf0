"""WordCountTask: counts the words of every input line; at end-of-stream writes one message per word."""

from __future__ import annotations

import re
from collections import Counter

from samza_nb import (
    EndOfStreamListenerTask,
    IncomingMessageEnvelope,
    InitableTask,
    MessageCollector,
    OutgoingMessageEnvelope,
    StreamTask,
    SystemStream,
    TaskContext,
    TaskCoordinator,
)

WORD = re.compile(r"[a-z]+(?:'[a-z]+)*")
"""A word: letters, with inner apostrophes ("miller's"); matched on the lower-cased line."""


def words(line: str) -> list[str]:
    """The words of ``line``, lower-cased."""
    return WORD.findall(line.lower())


class WordCountTask(StreamTask, InitableTask, EndOfStreamListenerTask):
    """Counts words in memory; when every input partition has ended, sends ``{"word": w, "count": n}`` to
    the stream named by ``wordcount.output`` (default ``file.counts``), most frequent first."""

    def init(self, context: TaskContext) -> None:
        self.counts: Counter[str] = Counter()
        self.output = SystemStream.parse(context.config.get_str("wordcount.output", "file.counts"))

    def process(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        self.counts.update(words(envelope.message))

    def on_end_of_stream(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        for word, count in sorted(self.counts.items(), key=lambda item: (-item[1], item[0])):
            collector.send(OutgoingMessageEnvelope(self.output, {"word": word, "count": count}))
