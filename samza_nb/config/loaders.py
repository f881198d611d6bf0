"""Loading a Config from ``.properties`` text or files, TOML files and dicts."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from samza_nb.config.config import Config
from samza_nb.errors import ConfigError


def parse_properties(text: str, source: str = "<properties>") -> dict[str, str]:
    """Parse Java ``.properties`` text: ``key=value`` or ``key: value``, ``#``/``!`` comments,
    backslash line continuations. A line without separator is a ConfigError naming the line."""
    result: dict[str, str] = {}
    pending = ""
    start_line = 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not pending and (not stripped or stripped[0] in "#!"):
            continue
        if not pending:
            start_line = number
        if stripped.endswith("\\") and not stripped.endswith("\\\\"):
            pending += stripped[:-1]
            continue
        logical = pending + stripped
        pending = ""
        positions = [p for p in (logical.find("="), logical.find(":")) if p >= 0]
        if not positions:
            raise ConfigError(f"{source}:{start_line}: expected 'key = value', got {logical!r}")
        sep = min(positions)
        key, value = logical[:sep].strip(), logical[sep + 1 :].strip()
        if not key:
            raise ConfigError(f"{source}:{start_line}: empty key in {logical!r}")
        result[key] = value
    if pending:
        raise ConfigError(f"{source}:{start_line}: line continuation at end of input")
    return result


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flatten(f"{prefix}.{key}" if prefix else str(key), inner, out)
    else:
        out[prefix] = value


def load_config(source: str | Path | Mapping[str, Any], *, validate: bool = True) -> Config:
    """A Config from a dict, a ``.properties`` file or a ``.toml`` file (nested tables flatten to dotted
    keys), validated unless ``validate`` is false (to apply overrides first). A missing file or bad
    content is a ConfigError naming it."""
    config = _load(source)
    return config.validate() if validate else config


def _load(source: str | Path | Mapping[str, Any]) -> Config:
    if isinstance(source, Mapping):
        return Config(source)
    path = Path(source)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text: {exc}") from None
    if path.suffix == ".toml":
        import tomllib  # (only a TOML config pays for the parser)

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
        except RecursionError:
            raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deep") from None
        flat: dict[str, Any] = {}
        _flatten("", data, flat)
        return Config(flat)
    return Config(parse_properties(text, source=str(path)))
