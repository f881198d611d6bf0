"""What a notebook run runs and what watches it: the two plug-in points of :class:`~.job.JobRun` (a
container in the kernel's process or the coordinator of a job of several containers; a monitor that makes
its JobViews)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.config import Config
    from samza_nb.notebook.display.views import JobView
    from samza_nb.observe.events import ChooserDecision
    from samza_nb.observe.states import RunOutcome

Listener = Callable[["JobView"], None]
"""Gets each new view of a run, on the job's loop thread."""


class RunnableJob(Protocol):
    """What a :class:`JobRun` runs: ``await run()`` until the job is done (raising what failed it);
    ``shutdown()`` asks for a graceful stop from any thread, also before ``run`` started. ``job_model`` is
    known once the job started."""

    @property
    def config(self) -> Config:
        """The job's config."""
        ...

    @property
    def job_model(self) -> JobModel | None:
        """The job model the run uses (None before it started)."""
        ...

    async def run(self) -> None:
        """Run the job to its end."""
        ...

    def shutdown(self) -> None:
        """Stop gracefully (every task commits); safe from any thread."""
        ...


class RunMonitor(Protocol):
    """Makes the JobViews of a run: ``start()`` on the job's loop when it starts, ``await finish()`` for
    the last view; ``view`` is the latest (read from any thread), ``listeners`` get each new view on the
    job's loop thread."""

    listeners: list[Listener]

    @property
    def view(self) -> JobView:
        """The latest view."""
        ...

    @property
    def decisions(self) -> Sequence[ChooserDecision]:
        """Every chooser decision recorded (``--trace``)."""
        ...

    def start(self) -> None:
        """Start sampling on the running loop."""
        ...

    async def finish(self, outcome: RunOutcome, error: str | None) -> JobView:
        """The run ended with ``outcome``: the last view."""
        ...


__all__ = ["Listener", "RunMonitor", "RunnableJob"]
