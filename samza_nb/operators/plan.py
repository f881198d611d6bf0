"""The plan of an application: what the planner decided and every task of the job reads back.

The planner (:mod:`.planner`) resolves the application's streams, sizes its intermediate streams, counts
the producers of each, and cuts the graph into stages; it writes the job config of each job it runs with
this plan as JSON under ``app.plan``. The operator task (:mod:`.task`) reads it back from its
``TaskContext.config`` — in this process or in a container process started elsewhere — and rebuilds the
graph from ``app.class`` (or the application object it was given).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from samza_nb.api.config_mapping import ConfigMapping
from samza_nb.api.streams import SystemStream
from samza_nb.config.app_keys import (
    APP_CLASS_KEY,
    APP_ID_KEY,
    APP_NAME_KEY,
    APP_PLAN_KEY,
    APP_SPLIT_KEY,
    APP_STAGE_KEY,
)
from samza_nb.errors import ConfigError

CONTROL_STORE: Final = "samza-control"
"""The store that keeps a task's end-of-stream and watermark bookkeeping (checkpointed with its offsets)."""


@dataclass(frozen=True)
class StreamPlan:
    """One stream of the application: its id in the graph, where it lives, its partition count (0 when
    unknown: an output the job creates on first send), whether it is intermediate, and for an intermediate
    stream how many upstream tasks produce to it (the count end-of-stream and watermarks reconcile)."""

    stream_id: str
    system_stream: SystemStream
    partitions: int = 0
    intermediate: bool = False
    producers: int = 0
    output: bool = False


@dataclass(frozen=True)
class ApplicationPlan:
    """The streams by id, and the stages: ``stages[i]`` is the set of stream ids (sources and
    intermediates) the job of stage ``i`` reads. ``stage`` is the stage this job runs, or None when one job
    runs the whole application (``stages`` then has one entry with every input)."""

    streams: Mapping[str, StreamPlan]
    stages: tuple[frozenset[str], ...]
    stage: int | None = None
    by_system_stream: Mapping[SystemStream, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "by_system_stream",
            {s.system_stream: s.stream_id for s in self.streams.values() if not s.output},
        )

    def inputs_of_job(self) -> frozenset[str]:
        """The stream ids this job reads: its stage's, or every input when it runs the whole application."""
        if self.stage is None:
            return frozenset().union(*self.stages)
        return self.stages[self.stage]

    def with_stage(self, stage: int | None) -> ApplicationPlan:
        """The same plan for the job of ``stage``."""
        return ApplicationPlan(self.streams, self.stages, stage)

    def to_json(self) -> str:
        """The plan as compact JSON (the value of ``app.plan``)."""
        return json.dumps(
            {
                "streams": [
                    {
                        "id": s.stream_id,
                        "system": s.system_stream.system,
                        "stream": s.system_stream.stream,
                        "partitions": s.partitions,
                        "intermediate": s.intermediate,
                        "producers": s.producers,
                        "output": s.output,
                    }
                    for s in self.streams.values()
                ],
                "stages": [sorted(stage) for stage in self.stages],
                "stage": self.stage,
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> ApplicationPlan:
        """The plan in ``text``; a ConfigError naming ``app.plan`` when it is not one."""
        try:
            data = json.loads(text)
            streams = {
                s["id"]: StreamPlan(
                    s["id"],
                    SystemStream(s["system"], s["stream"]),
                    int(s["partitions"]),
                    bool(s["intermediate"]),
                    int(s["producers"]),
                    bool(s["output"]),
                )
                for s in data["streams"]
            }
            stages = tuple(frozenset(stage) for stage in data["stages"])
            stage = data["stage"]
            return cls(streams, stages, None if stage is None else int(stage))
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:  # inf, deep nesting
            raise ConfigError(
                f"{APP_PLAN_KEY} is not a plan written by the planner: {exc!r}", key=APP_PLAN_KEY
            ) from None

    @classmethod
    def from_config(cls, config: ConfigMapping) -> ApplicationPlan:
        """The plan of the job ``config`` describes; a ConfigError when the config was not planned."""
        text = config.get_str(APP_PLAN_KEY, "")
        if not text:
            raise ConfigError(
                f"{APP_PLAN_KEY} is not set: run the application through TestRunner, the CLI (app.class) or "
                "the notebook, which plan it first",
                key=APP_PLAN_KEY,
            )
        return cls.from_json(text)


__all__ = [
    "APP_CLASS_KEY",
    "APP_ID_KEY",
    "APP_NAME_KEY",
    "APP_PLAN_KEY",
    "APP_SPLIT_KEY",
    "APP_STAGE_KEY",
    "CONTROL_STORE",
    "ApplicationPlan",
    "StreamPlan",
]
