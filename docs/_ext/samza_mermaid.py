"""Mermaid diagrams (```` ```{mermaid} ```` blocks) drawn in the reader's browser by the Mermaid script
bundled with the site, so they draw with no network, from a web server or from the files opened as they are.

The script is ``dist/mermaid.min.js`` of the npm package ``mermaid`` (``scripts/docs-assets.sh`` brings it
into ``_static/vendor/``; ``make setup`` runs it). It is a classic script, not an ES module: a browser
refuses to import modules from ``file://`` pages. A page with a diagram loads it and ``mermaid-init.js``,
which draws every ``<pre class="mermaid">`` of the page; other pages load nothing.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError
from sphinx.util.docutils import SphinxDirective
from sphinx.writers.html5 import HTML5Translator

SCRIPT = "vendor/mermaid.min.js"
"""The bundled Mermaid, relative to ``_static``."""


class mermaid(nodes.General, nodes.Element):
    """A diagram: its Mermaid source in ``code``."""


class Mermaid(SphinxDirective):
    """```` ```{mermaid} ````: the block's content is the diagram's Mermaid source."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        node = mermaid(code="\n".join(self.content))
        self.set_source_info(node)
        return [node]


def visit_html(translator: HTML5Translator, node: mermaid) -> None:
    """The source in a ``<pre class="mermaid">`` (shown as text until the script draws it)."""
    translator.body.append(f'<pre class="mermaid">\n{escape(node["code"])}\n</pre>\n')
    raise nodes.SkipNode


def visit_text(translator: Any, node: mermaid) -> None:
    """Other builders: nothing (the diagram is a picture of the text around it)."""
    raise nodes.SkipNode


def add_scripts(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any) -> None:
    """A page with a diagram loads the bundled Mermaid and the script that draws its diagrams."""
    if doctree is not None and doctree.next_node(mermaid) is not None:
        app.add_js_file(SCRIPT)
        app.add_js_file("mermaid-init.js")


def check_script(app: Sphinx) -> None:
    """Refuse to build an HTML site whose diagrams would not draw: the bundled script must be there."""
    if app.builder.format != "html":
        return
    static = [Path(app.confdir) / path for path in app.config.html_static_path]
    if not any((path / SCRIPT).is_file() for path in static):
        raise ConfigError(
            f"the documentation draws its diagrams with _static/{SCRIPT}, which is missing: "
            "run `make setup` (or `bash scripts/docs-assets.sh`)"
        )


def setup(app: Sphinx) -> dict[str, Any]:
    """The extension's entry point."""
    app.add_node(mermaid, html=(visit_html, None), text=(visit_text, None))
    app.add_directive("mermaid", Mermaid)
    app.connect("builder-inited", check_script)
    app.connect("html-page-context", add_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
