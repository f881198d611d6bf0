"""Pages the documentation generates from the repository before Sphinx reads its sources.

- ``tutorials/notebooks/NN_*.ipynb``: the example notebooks of ``notebooks/``, each with a Binder badge
  cell after its title (the notebooks themselves are not changed; the copies are git-ignored);
- ``reference/_generated/configuration-keys.md``: every key of ``samza_nb.config.catalogue.KEYS`` with its
  default, kind and description (``describe_keys``), one section and table per key group (``job.*``,
  ``task.*``, ...: narrow enough to read at 1,280 px), so the configuration reference cannot drift;
- ``reference/_generated/magics.md``: every magic's usage and options from its own argument parser
  (:mod:`magics_reference`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from magics_reference import magics_reference
from pygments.lexers.special import TextLexer
from sphinx.application import Sphinx

from samza_nb.config.catalogue import KEYS, KeySpec, describe_keys


def binder_badge(repository: str, branch: str, notebook: str) -> str:
    """The Markdown of a badge opening ``notebook`` (a path in the repository) on mybinder.org."""
    repo = repository.removeprefix("https://github.com/").strip("/")
    url = f"https://mybinder.org/v2/gh/{repo}/{branch}?labpath={notebook}"
    return f"[![Open in Binder](https://mybinder.org/badge_logo.svg)]({url}) Run this notebook on Binder."


def copy_notebooks(root: Path, docs: Path, repository: str, branch: str) -> list[Path]:
    """Copy ``notebooks/*.ipynb`` into ``docs/tutorials/notebooks/``, a Binder cell after each title."""
    target = docs / "tutorials" / "notebooks"
    target.mkdir(parents=True, exist_ok=True)
    copies = []
    for source in sorted((root / "notebooks").glob("*.ipynb")):
        notebook = json.loads(source.read_text(encoding="utf-8"))
        badge = binder_badge(repository, branch, f"notebooks/{source.name}")
        cell = {"cell_type": "markdown", "id": "binder-badge", "metadata": {}, "source": [badge]}
        notebook["cells"].insert(1, cell)
        copy = target / source.name
        write_if_changed(copy, json.dumps(notebook, indent=1, ensure_ascii=False) + "\n")
        copies.append(copy)
    for stale in set(target.glob("*.ipynb")) - set(copies):
        stale.unlink()
    return copies


def write_if_changed(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` unless it holds it already (so Sphinx rereads only what changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def configuration_tables(keys: tuple[KeySpec, ...] = KEYS) -> str:
    """The configuration reference: a section per key group (a key's first segment), in catalogue order,
    each with the table of its keys."""
    groups: dict[str, list[KeySpec]] = {}
    for spec in keys:
        groups.setdefault(spec.pattern.split(".", 1)[0], []).append(spec)
    return "\n".join(
        f"## `{group}.*`\n\n:::{{container}} samza-config-keys\n{describe_keys(tuple(specs))}:::\n"
        for group, specs in groups.items()
    )


def generate(app: Sphinx) -> None:
    """Write the generated pages into the source tree before Sphinx reads it."""
    docs = Path(app.srcdir)
    root = docs.parent
    copy_notebooks(root, docs, app.config.samza_binder_repository, app.config.samza_binder_branch)
    generated = docs / "reference" / "_generated"
    write_if_changed(generated / "configuration-keys.md", configuration_tables())
    write_if_changed(generated / "magics.md", magics_reference())


def setup(app: Sphinx) -> dict[str, Any]:
    """The extension's entry point."""
    app.add_config_value("samza_binder_repository", "", "env")
    app.add_config_value("samza_binder_branch", "main", "env")
    app.connect("builder-inited", generate)
    app.add_lexer("layers", TextLexer)  # docs/architecture.md's layer map, read by tests/test_architecture.py
    return {"parallel_read_safe": True, "parallel_write_safe": True}
