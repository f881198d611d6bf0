"""Several jobs run at once in this process as one: the jobs of a split application, one per stage."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from samza_nb.api.job_model import JobModel
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.runtime.local import LocalJobRunner


class JobGroup:
    """The runners of several jobs (each one container in this process), run and stopped together: the run
    ends when every job stopped; the first job that fails stops the others, and its error is the run's.
    ``name`` names the group (the application) in progress and summary lines."""

    def __init__(self, name: str, runners: Sequence[LocalJobRunner]) -> None:
        self.name = name
        self.runners = list(runners)

    @property
    def processed(self) -> int:
        """Messages processed by every job so far."""
        return sum(runner.processed for runner in self.runners)

    @property
    def job_model(self) -> JobModel | None:
        """The first job's model once any job got to its tasks (None before)."""
        return next((r.job_model for r in self.runners if r.job_model is not None), None)

    def stop(self) -> None:
        """Stop every job gracefully (each commits); safe from any thread."""
        for runner in self.runners:
            runner.stop()

    async def run_async(self, timeout: float | None = None) -> None:
        """Run every job until all stopped (see the class); ``timeout`` applies to each job as in
        :meth:`LocalJobRunner.run_async`. Cancelling this cancels every job."""
        runs = [asyncio.ensure_future(runner.run_async(timeout)) for runner in self.runners]
        try:
            _, pending = await asyncio.wait(runs, return_when=asyncio.FIRST_EXCEPTION)
            failed = next((r for r in runs if r.done() and r.exception() is not None), None)
            if pending:
                if failed is not None:
                    self.stop()
                await asyncio.wait(pending)
        except asyncio.CancelledError:
            for run in runs:
                run.cancel()
            await asyncio.wait(runs)
            for run in runs:
                if not run.cancelled():
                    run.exception()
            raise
        for run in runs:
            run.exception()  # retrieved: one error is the run's
        first = failed or next((r for r in runs if r.exception() is not None), None)
        if first is not None:
            first.result()

    async def read_checkpoints(self) -> dict[str, dict[SystemStreamPartition, str]]:
        """The last checkpoint of each task of every job, keyed ``<job.name>/<task>``."""
        result: dict[str, dict[SystemStreamPartition, str]] = {}
        for runner in self.runners:
            for task, offsets in (await runner.read_checkpoints()).items():
                result[f"{runner.name}/{task}"] = offsets
        return result


__all__ = ["JobGroup"]
