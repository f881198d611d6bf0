"""Sphinx configuration of the samza_nb documentation site (``make docs``).

Sphinx with MyST-NB and the PyData theme, as the Jupyter ecosystem's own sites are built (JupyterLab,
ipywidgets, xarray): pages are MyST Markdown, the tutorials are the example notebooks shown with their stored
outputs (never executed here), the reference is generated from the code. ``_ext/samza_docs.py`` writes the
generated pages (the configuration keys, the tutorials' copies with their Binder links) before Sphinx reads.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # samza_nb from this checkout, not an installed copy
sys.path.insert(0, str(DOCS / "_ext"))

import samza_nb  # noqa: E402

# The repository the Binder badges open (mybinder.org builds it from binder/). A placeholder until the
# project has its public address: change it here, every tutorial's badge follows.
samza_binder_repository = BINDER_REPOSITORY = "https://github.com/samza-nb/samza_nb"
samza_binder_branch = BINDER_BRANCH = "main"

project = "samza_nb"
author = "the samza_nb authors"
copyright = "the samza_nb authors"
version = release = samza_nb.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "samza_mermaid",
    "sphinxarg.ext",
    "samza_docs",
]

exclude_patterns = ["_build", "reference/_generated", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints"]
suppress_warnings = ["myst.header"]  # the notebooks' titles are "# 01 · ...", their sections start at ##

# MyST: the Markdown of the pages and of the notebooks' markdown cells.
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
# Smart quotes, but no dashes: `--replay` in plain text stays two hyphens (an option), not an en dash.
smartquotes_action = "qe"

# MyST-NB: notebooks are shown as stored, never run by the build (`make docs` stays fast and needs no
# kernel, broker or Spark); a live dashboard is shown as the HTML snapshot stored beside its widget view,
# so a saved notebook's dashboard reads without a kernel and widget views without state warn of nothing.
nb_execution_mode = "off"
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "text/html", 0),
]
nb_output_stderr = "show"

# autodoc: the public API from the docstrings.
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_mock_imports = ["pyspark"]

html_theme = "pydata_sphinx_theme"
html_title = f"samza_nb {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": {"**": ["page-toc", "sourcelink"], "reference/configuration": []},
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_last_updated_fmt = None
