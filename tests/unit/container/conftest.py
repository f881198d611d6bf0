"""``loop_mode``: run a container test in each way the run loop can execute a sync task.

- ``inline``: the run path (sync task, concurrency 1, loop thread, nobody observing per message);
- ``observed``: a subscriber of every event, so each message goes the general path with its events;
- ``thread_pool``: sync tasks on ``job.container.thread.pool.size`` threads (callbacks);
- ``concurrency3``: ``task.max.concurrency`` 3 (inline calls on the general path).

Every container the test builds gets the mode (a key the test sets itself wins).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.container import container as container_module

LOOP_MODES = ("inline", "observed", "thread_pool", "concurrency3")

_MODE_CONFIG: dict[str, dict[str, str]] = {
    "inline": {},
    "observed": {},
    "thread_pool": {"job.container.thread.pool.size": "2"},
    "concurrency3": {"task.max.concurrency": "3"},
}


def apply_loop_mode(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every SamzaContainer built from now on run in ``mode``."""
    original = container_module.SamzaContainer.__init__

    def init(self: Any, config: Config, *args: Any, **kwargs: Any) -> None:
        extra = {k: v for k, v in _MODE_CONFIG[mode].items() if k not in config}
        if extra:
            config = Config({**dict(config), **extra})
        original(self, config, *args, **kwargs)
        if mode == "observed":
            self.bus.subscribe(lambda event: None)

    monkeypatch.setattr(container_module.SamzaContainer, "__init__", init)


@pytest.fixture(params=LOOP_MODES)
def loop_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The execution mode this run of the test uses (see the module docstring)."""
    apply_loop_mode(request.param, monkeypatch)
    yield request.param
