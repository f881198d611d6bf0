"""``loop_mode``: run a container test in each way the run loop can execute a sync task.

The modes are the public ones of :data:`samza_nb.testing.LOOP_MODES` (inline, observed, thread_pool,
concurrency_3); a test hands the mode it gets to what builds its containers (``TestRunner.of(task,
mode=loop_mode)``, ``Job.run(task, mode=loop_mode)``). A key the test sets itself wins over the mode's.
"""

from __future__ import annotations

import pytest

from samza_nb.testing import LOOP_MODES, LoopMode


@pytest.fixture(params=LOOP_MODES, ids=str)
def loop_mode(request: pytest.FixtureRequest) -> LoopMode:
    """The execution mode this run of the test uses."""
    mode: LoopMode = request.param
    return mode
