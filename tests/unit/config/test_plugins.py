"""``import_dotted``: the one way plug-ins are imported by the dotted path a config key names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError


class Outer:
    class Inner:
        pass


def test_a_module_attribute_and_a_nested_class() -> None:
    assert import_dotted("json.dumps", "k") is __import__("json").dumps
    assert import_dotted(f" {__name__}.Outer.Inner ", "k") is Outer.Inner


@pytest.fixture
def broken_modules(tmp_path: Path) -> object:
    (tmp_path / "plugins_raising_xyz.py").write_text("raise RuntimeError('boom at import')\n")
    (tmp_path / "plugins_missing_dep_xyz.py").write_text("import no_such_dependency_xyz\n")
    sys.path.insert(0, str(tmp_path))
    yield
    sys.path.remove(str(tmp_path))
    for name in ("plugins_raising_xyz", "plugins_missing_dep_xyz"):
        sys.modules.pop(name, None)


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("NotDotted", "expected a dotted path"),
        ("a..b", "expected a dotted path"),
        ("no_such_module_xyz.Thing", "module 'no_such_module_xyz' not found"),
        ("samza_nb.no_such_module_xyz.Thing", "module 'samza_nb.no_such_module_xyz' not found"),
        ("json.NoSuchThing", "module 'json' has no attribute 'NoSuchThing'"),
        (f"{__name__}.Outer.Missing", "has no attribute 'Outer.Missing'"),
        ("plugins_raising_xyz.Thing", "importing module 'plugins_raising_xyz' raised RuntimeError: boom"),
        (
            "plugins_missing_dep_xyz.Thing",
            "ModuleNotFoundError: No module named 'no_such_dependency_xyz'",
        ),
    ],
)
def test_errors_name_the_key_the_path_and_why(broken_modules: object, path: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        import_dotted(path, "some.key")
    message = str(info.value)
    assert info.value.key == "some.key"
    assert message.startswith(f"some.key={path!r}")
    assert why in message
