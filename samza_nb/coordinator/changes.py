"""Refusing job changes that would mix the state of different tasks (a stateful job's grouper or tasks)."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.config.grouper_names import DEFAULT_GROUPER, GROUPER_KEY, short_grouper_name
from samza_nb.config.stores import configured_store_names
from samza_nb.errors import ConfigError


class JobChangeRefused(ConfigError):
    """A stateful job's grouper or input partition count changed since its last run (names what changed)."""


def stores_of(config: Config) -> list[str]:
    """Names of the stores the job declares (``stores.<name>.factory``, as
    :func:`~samza_nb.config.stores.configured_store_names` reads them): a job with any is stateful."""
    return configured_store_names(config)


def refuse_incompatible_change(
    config: Config,
    previous_config: Mapping[str, str],
    previous_changelog: Mapping[str, int],
    tasks: Collection[str],
    ssps: Collection[SystemStreamPartition],
    stream: str,
) -> None:
    """Raise :class:`JobChangeRefused` when the job is stateful, ran before (``previous_changelog`` from the
    coordinator stream ``stream`` is not empty) and either its grouper changed or its tasks (``tasks``, from
    the inputs' partitions ``ssps`` now) are not the tasks of the last run. A stateless job may change."""
    stores = stores_of(config)
    if not stores or not previous_changelog:
        return
    job = f"job {config.job_name()!r} is stateful (stores: {', '.join(stores)})"
    reset = "or start it afresh under a new job.id (its state starts empty)"
    # The short and the class name of one grouper are no change.
    before = short_grouper_name(previous_config.get(GROUPER_KEY)) or previous_config.get(GROUPER_KEY)
    now = short_grouper_name(config.get_str(GROUPER_KEY, DEFAULT_GROUPER)) or DEFAULT_GROUPER
    if previous_config and before != now:
        raise JobChangeRefused(
            f"{GROUPER_KEY} changed from {before!r} to {now!r}, but {job}: a new grouper would mix the state "
            f"of different tasks in one changelog partition. Set it back to {before!r}, {reset}",
            key=GROUPER_KEY,
        )
    old, new = set(previous_changelog), set(tasks)
    if old != new:
        counts: dict[str, int] = {}
        for ssp in ssps:
            name = f"{ssp.system}.{ssp.stream}"
            counts[name] = max(counts.get(name, 0), ssp.partition + 1)
        spelled = ", ".join(f"{name}: {n} partitions" for name, n in sorted(counts.items()))
        added, removed = sorted(new - old), sorted(old - new)
        detail = "; ".join(
            part
            for part in (
                f"new tasks: {_some(added)}" if added else "",
                f"tasks gone: {_some(removed)}" if removed else "",
            )
            if part
        )
        raise JobChangeRefused(
            f"the input partition count changed, but {job}: {stream} maps {len(old)} tasks to changelog "
            f"partitions and the inputs now make {len(new)} ({spelled}; {detail}). Each task's state lives "
            f"in its changelog partition, so the tasks must stay the same. Restore the partition count, "
            + reset,
            key="task.inputs",
        )


def _some(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


__all__ = ["JobChangeRefused", "refuse_incompatible_change", "stores_of"]
