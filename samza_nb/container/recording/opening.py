"""Which schedule a run gets (:func:`open_schedule`): none, a recorder, or a replayer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from samza_nb.container.recording.recording import Recording
from samza_nb.container.recording.replay import ScheduleReplayer
from samza_nb.container.recording.schedule import Schedule, ScheduleRecorder
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    import os

    from samza_nb.config import Config


def open_schedule(config: Config, replay: str | os.PathLike[str] | None) -> Schedule:
    """The schedule of a run: a replay of the recording in ``replay``, else a recorder when
    ``job.record.path`` is set, else a :class:`Schedule` that does nothing (the default: nothing
    recorded, nothing forced, nothing spent)."""
    path = config.get_str("job.record.path")
    if replay is None and not path:
        return Schedule()
    if config.get_int("job.container.count", 1) != 1:
        raise ConfigError(
            "job.record.path / replay: a schedule is recorded and replayed for a job run as one container "
            "(job.container.count = 1)",
            key="job.record.path" if replay is None else "job.container.count",
        )
    if replay is None:
        assert path is not None
        return ScheduleRecorder(Path(path), config)
    if path:
        raise ConfigError(
            f"job.record.path = {path}: a replay does not record; unset it to replay {replay}",
            key="job.record.path",
        )
    return ScheduleReplayer(Recording(replay))


__all__ = ["open_schedule"]
