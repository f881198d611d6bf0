"""A custom message chooser: weighted round robin between input streams.

``task.chooser.class = samza_nb_ext.chooser.WeightedRoundRobinChooser`` with
``task.chooser.weights.<system>.<stream> = N`` (default 1): the chooser takes up to N messages in a row from
one stream (when it has them waiting) before it moves on to the next stream, e.g. three clicks for every
impression. Within a stream, partitions take turns.

The plug-in point: ``task.chooser.class`` names one of two shapes, a ``samza_nb.chooser.ChooserFactory``
(anything with ``from_config(config, bootstrap_metadata, inputs, offset_comparator)``, like this class) or
a chooser class with a no-argument constructor. A chooser implements samza_nb.chooser.MessageChooser: it
holds at most one envelope per partition (the container offers a partition's next envelope only after the
previous one was chosen) and picks one.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from samza_nb import ConfigError, IncomingMessageEnvelope, SystemStream, SystemStreamPartition

WEIGHT_PREFIX = "task.chooser.weights."


class WeightedRoundRobinChooser:
    """Up to ``weights[stream]`` messages in a row from each stream, streams in a fixed cycle."""

    def __init__(self, weights: Mapping[SystemStream, int] | None = None) -> None:
        self._weights = dict(weights or {})
        self._streams: list[SystemStream] = []
        self._waiting: dict[SystemStream, deque[IncomingMessageEnvelope]] = {}
        self._current = 0
        self._taken = 0

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, str],
        bootstrap_metadata: Any = None,
        inputs: Iterable[Any] | None = None,
        offset_comparator: Any = None,
    ) -> WeightedRoundRobinChooser:
        """The chooser for the job: weights from ``task.chooser.weights.<system>.<stream>``."""
        weights: dict[SystemStream, int] = {}
        for key, raw in config.items():
            if not key.startswith(WEIGHT_PREFIX):
                continue
            system, _, stream = key[len(WEIGHT_PREFIX) :].partition(".")
            try:
                weight = int(raw)
            except ValueError:
                weight = 0
            if not system or not stream or weight < 1:
                raise ConfigError(
                    f"{key}={raw!r}: expected task.chooser.weights.<system>.<stream> = a whole number >= 1",
                    key=key,
                )
            weights[SystemStream(system, stream)] = weight
        return cls(weights)

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Add the partition's stream to the cycle (in order of registration)."""
        stream = ssp.system_stream
        if stream not in self._waiting:
            self._streams.append(stream)
            self._waiting[stream] = deque()

    def start(self) -> None:
        """Nothing to prepare."""

    def stop(self) -> None:
        """Forget waiting envelopes."""
        for waiting in self._waiting.values():
            waiting.clear()

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Queue the envelope behind its stream's other waiting partitions."""
        self._waiting[envelope.ssp.system_stream].append(envelope)

    def choose(self) -> IncomingMessageEnvelope | None:
        """The current stream's next envelope while it has weight left, else the next stream's."""
        streams = self._streams
        for step in range(len(streams) + 1):
            stream = streams[self._current]
            waiting = self._waiting[stream]
            if waiting and (step > 0 or self._taken < self._weights.get(stream, 1)):
                if step > 0:
                    self._taken = 0
                self._taken += 1
                return waiting.popleft()
            self._current = (self._current + 1) % len(streams)
            if step == 0:
                self._taken = 0
        return None
