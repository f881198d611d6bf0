"""What a task reads of its job's configuration: a read-only mapping of Samza key names to string values
with typed getters (Samza's ``Config`` of samza-api). ``samza_nb.config.Config`` is the one the container
hands a task in :class:`~samza_nb.api.task.TaskContext`; the key catalogue and its defaults live there,
a layer above."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, overload


class ConfigMapping(Mapping[str, str]):
    """Read-only ``str -> str`` mapping with typed getters. A getter of a key that is missing falls back to
    the ``default`` given, else to the key's documented default; a value that is not of the type asked for
    raises a ConfigError naming the key and the value."""

    __slots__ = ()

    @overload
    def get_str(self, key: str) -> str | None: ...
    @overload
    def get_str(self, key: str, default: str) -> str: ...
    @abstractmethod
    def get_str(self, key: str, default: Any = ...) -> str | None:
        """The value of ``key``, else ``default``, else the key's documented default (or None)."""

    @abstractmethod
    def require(self, key: str, why: str = "") -> str:
        """The value of ``key``; a ConfigError naming the key when it is missing or blank."""

    @abstractmethod
    def get_int(self, key: str, default: int | None = None) -> int:
        """``key`` as an int; a ConfigError naming key and value when it is not one."""

    @abstractmethod
    def get_bool(self, key: str, default: bool | None = None) -> bool:
        """``key`` as a bool; a ConfigError naming key and value when it is not one."""

    @abstractmethod
    def get_list(self, key: str, default: list[str] | None = None) -> list[str]:
        """``key`` as a comma-separated list (blanks dropped)."""

    @abstractmethod
    def job_name(self) -> str:
        """``job.name`` (its default when unset); it names the job's checkpoints and state."""

    @abstractmethod
    def job_id(self) -> str:
        """``job.id`` (its default when unset); the job instance beside ``job.name``."""


__all__ = ["ConfigMapping"]
