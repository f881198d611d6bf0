"""The job's desired control state (paused or not, live knobs), held by the job coordinator and handed to
every container in the answer to its status report.

A container learns a change on its next report (so within one
``cluster-manager.container.status.interval.ms``), applies it (pause, resume, set), and reports back at
once with the sequence number it applied and whether it is paused. :meth:`JobControl.wait_paused` waits
for that confirmation from every container still running.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from samza_nb.container import knobs
from samza_nb.errors import ConfigError, JobTimeoutError, SamzaError

COMMAND_KEYS = ("pause", "set", "timeout")
"""What a control command (``POST /control``'s body) may hold."""


@dataclass(frozen=True)
class ControlState:
    """What every container of the job should be: ``paused`` or not, with ``knobs`` (live config keys ->
    values, the changes asked so far); ``seq`` grows with every change (0: nothing asked yet)."""

    seq: int = 0
    paused: bool = False
    knobs: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"seq", "paused", "knobs"}``."""
        return {"seq": self.seq, "paused": self.paused, "knobs": dict(self.knobs)}

    @classmethod
    def from_dict(cls, data: object) -> ControlState | None:
        """The state in an answer's ``"control"`` (None when absent or not of this shape: an older
        coordinator, or a stranger)."""
        if not isinstance(data, dict):
            return None
        seq, paused, values = data.get("seq"), data.get("paused"), data.get("knobs", {})
        if not isinstance(seq, int) or isinstance(seq, bool) or not isinstance(paused, bool):
            return None
        if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
            return None
        return cls(seq, paused, {str(k): v for k, v in values.items()})


class JobControl:
    """The desired :class:`ControlState` and the containers' confirmations (thread-safe).

    ``pending()``: the container ids still running that have not confirmed the current pause (taken from
    the coordinator's status through ``confirmations``: id -> (applied seq, paused) of each container whose
    last report is not final)."""

    def __init__(self, confirmations: Callable[[], Mapping[str, tuple[int, bool]]]) -> None:
        self._state = ControlState()
        self._confirmations = confirmations
        self._changed = threading.Condition()

    @property
    def state(self) -> ControlState:
        """The current desired state."""
        with self._changed:
            return self._state

    def pause(self) -> ControlState:
        """Ask every container to pause (idempotent: no new seq when already asked)."""
        return self._change(paused=True)

    def resume(self) -> ControlState:
        """Ask every container to dispatch again."""
        return self._change(paused=False)

    def set(self, changes: Mapping[str, Any] | None, keywords: Mapping[str, Any]) -> dict[str, str]:
        """Ask every container to apply ``changes`` and ``keywords`` (checked as a container checks them:
        any key that cannot change live is a ConfigError listing the live keys, a bad value one naming key
        and value); the knobs asked so far."""
        parsed = knobs.live_changes(changes, keywords)
        merged = {**self.state.knobs, **{key: str(value) for key, value in parsed.items()}}
        return dict(self._change(knobs=merged).knobs)

    def withdraw(self, keys: Mapping[str, str | None]) -> ControlState:
        """Put ``keys`` back to the values given (None: not asked), after containers refused a change."""
        merged = dict(self.state.knobs)
        for key, value in keys.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return self._change(knobs=merged)

    def wait_applied(self, seq: int, timeout: float) -> list[str]:
        """Block until every running container applied control state ``seq`` or ``timeout`` s passed;
        the containers that have not (empty when all did)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                waiting = sorted(cid for cid, (done, _paused) in self._confirmations().items() if done < seq)
                left = deadline - time.monotonic()
                if not waiting or left <= 0:
                    return waiting
                self._changed.wait(left)

    def reported(self) -> None:
        """A container reported: wake whoever waits for confirmations."""
        with self._changed:
            self._changed.notify_all()

    def pending(self) -> list[str]:
        """Running containers that have not confirmed the current pause (empty when not paused)."""
        state = self.state
        if not state.paused:
            return []
        return sorted(
            cid for cid, (seq, paused) in self._confirmations().items() if seq < state.seq or not paused
        )

    def wait_paused(self, timeout: float | None = None) -> None:
        """Block until every running container confirmed the pause; JobTimeoutError naming the others after
        ``timeout`` s; a SamzaError when a resume came meanwhile."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while True:
                if not self._state.paused:
                    raise SamzaError("the job was resumed before every container confirmed the pause")
                waiting = self.pending()
                if not waiting:
                    return
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise JobTimeoutError(
                        f"containers {', '.join(waiting)} did not confirm the pause within {timeout:g} s "
                        "(they pause once their in-flight messages complete)"
                    )
                self._changed.wait(left)

    def _change(self, *, paused: bool | None = None, knobs: Mapping[str, str] | None = None) -> ControlState:
        with self._changed:
            old = self._state
            new_paused = old.paused if paused is None else paused
            new_knobs = old.knobs if knobs is None else dict(knobs)
            if new_paused != old.paused or new_knobs != old.knobs:
                self._state = ControlState(old.seq + 1, new_paused, new_knobs)
                self._changed.notify_all()
            return self._state


class Steerable(Protocol):
    """What a control command steers (the job coordinator)."""

    def pause(self, timeout: float | None = None) -> None:
        """Ask every container to pause and wait for their confirmation."""
        ...

    def resume(self) -> None:
        """Ask every container to dispatch again."""
        ...

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Ask every container to change live knobs."""
        ...

    def control_state(self) -> ControlState:
        """The desired state."""
        ...

    def paused_containers(self) -> list[str]:
        """Containers that confirmed the current pause."""
        ...


def run_command(target: Steerable, command: Mapping[str, Any]) -> dict[str, Any]:
    """Apply a control command ``{"set": {key: value}, "pause": true|false, "timeout": seconds}`` (each
    part optional; the knobs first): ``"pause": true`` waits up to ``timeout`` s (none: it does not wait)
    for every container's confirmation. The answer: ``{"control": <state>, "paused": [ids]}``. A
    ConfigError names a part it cannot take; a JobTimeoutError names the containers not paused in time."""
    unknown = sorted(set(command) - set(COMMAND_KEYS))
    if unknown:
        takes = ", ".join(COMMAND_KEYS)
        raise ConfigError(f"control command: unknown {', '.join(unknown)} (it takes {takes})")
    changes, pause, timeout = command.get("set"), command.get("pause"), command.get("timeout")
    if changes is not None and not isinstance(changes, dict):
        raise ConfigError(f"control command: set must be an object of key: value, not {changes!r}")
    if pause is not None and not isinstance(pause, bool):
        raise ConfigError(f"control command: pause must be true or false, not {pause!r}")
    number = isinstance(timeout, int | float) and not isinstance(timeout, bool)
    if timeout is not None and (not number or timeout < 0):
        raise ConfigError(f"control command: timeout must be a number of seconds >= 0, not {timeout!r}")
    if changes:
        target.set(changes)
    if pause is True:
        try:
            target.pause(timeout if timeout is not None else 0)
        except JobTimeoutError:
            if timeout is not None:
                raise
    elif pause is False:
        target.resume()
    return {"control": target.control_state().to_dict(), "paused": target.paused_containers()}


__all__ = ["COMMAND_KEYS", "ControlState", "JobControl", "Steerable", "run_command"]
