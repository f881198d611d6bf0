"""The config keys of a StreamApplication's job (``app.*``), here below the operators so that a runner can
read them without importing the operators (a task's job never needs them)."""

from __future__ import annotations

from typing import Final

APP_CLASS_KEY: Final = "app.class"
"""Dotted path of the StreamApplication class (the CLI, container processes)."""

APP_PLAN_KEY: Final = "app.plan"
"""The plan as JSON, written by the planner into the job config (never by hand)."""

APP_NAME_KEY: Final = "app.name"
"""The application's job.name (the jobs of a split application each have their own job.name)."""

APP_ID_KEY: Final = "app.id"
"""The application's job.id, likewise."""

APP_SPLIT_KEY: Final = "app.split.jobs"
"""true: run one job per stage (cut at the partition_by boundaries)."""

APP_STAGE_KEY: Final = "app.stage"
"""Run only this stage's job (an int) of a split application."""


__all__ = ["APP_CLASS_KEY", "APP_ID_KEY", "APP_NAME_KEY", "APP_PLAN_KEY", "APP_SPLIT_KEY", "APP_STAGE_KEY"]
