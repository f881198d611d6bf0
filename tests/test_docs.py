"""The documentation site: it builds with warnings as errors, holds the pages it must (a page per example
notebook, the API of the public names, every configuration key), no internal link of it is broken, the
README stays a front page (its code blocks closed where they should be) and the figures pages hold no history;
the site reads as a user reads it: in headless Chromium with no network, its diagrams draw and the
configuration reference fits 1,280 px; the magics reference holds every option of every magic's parser;
no text becomes a ``mailto:`` link.

The site is built once per run into a temporary directory (Sphinx with MyST-NB, as ``make docs`` does; the
notebooks are not executed), so the test checks this checkout's sources, not a stale build. Chromium is
started once for the tests that read pages in it (screenshots: tests/notebook/artifacts/docs-*.png).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from samza_nb.config.catalogue import KEYS
from samza_nb.notebook.magics.parsers import PARSERS
from samza_nb.notebook.magics.registration import SamzaMagics
from tests.notebook.browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS
from tests.requirements import require, unavailable

require("sphinx", "the documentation needs the docs extra (pip install -e '.[docs]')")
require("myst_nb", "the documentation needs the docs extra (pip install -e '.[docs]')")

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
SPHINX = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
API_NAMES = {
    "LocalJobRunner": "reference/api/runtime.html",
    "TestRunner": "reference/api/testing.html",
    "register_dataframe": "reference/api/spark.html",
    "StreamApplication": "reference/api/operators.html",
    "DurableLog": "reference/api/log.html",
    "SparkJobRunner": "reference/api/spark.html",
}


class Page(HTMLParser):
    """The ids and the link targets (href, src) of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            elif (name == "href" and tag in ("a", "link")) or (name == "src" and tag in ("img", "script")):
                self.links.append(value)


def parse(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The site, built from this checkout with warnings as errors."""
    out = tmp_path_factory.mktemp("site")
    build = subprocess.run(
        [*SPHINX, "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, f"sphinx-build failed:\n{build.stdout}\n{build.stderr}"
    yield out / "html"


def test_the_site_has_a_page_per_example_notebook_in_reading_order(site: Path) -> None:
    notebooks = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(notebooks) >= 8
    for name in notebooks:
        page = site / "tutorials" / "notebooks" / f"{name}.html"
        assert page.exists(), f"no tutorial page for notebooks/{name}.ipynb"
        assert "mybinder.org/v2/gh/" in page.read_text(encoding="utf-8"), f"{name}: no Binder link"
    index = (site / "tutorials" / "index.html").read_text(encoding="utf-8")
    positions = [index.index(f"notebooks/{name}.html") for name in notebooks]
    assert positions == sorted(positions)


def test_the_api_pages_document_the_public_names(site: Path) -> None:
    for name, page in API_NAMES.items():
        ids = parse(site / page).ids
        assert any(i.endswith("." + name) for i in ids), f"{page} does not document {name}"


def test_the_configuration_page_holds_every_key_of_the_catalogue(site: Path) -> None:
    text = (site / "reference" / "configuration.html").read_text(encoding="utf-8")
    shown = {
        unescape(code) for code in re.findall(r"<code[^>]*><span class=\"pre\">(.*?)</span></code>", text)
    }
    missing = [spec.pattern for spec in KEYS if spec.pattern not in shown]
    assert missing == []


def unescape(html: str) -> str:
    return html.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def test_the_magics_and_the_cli_are_generated(site: Path) -> None:
    magics = unescape((site / "reference" / "magics.html").read_text(encoding="utf-8"))
    for magic in [*SamzaMagics.magics["line"], *SamzaMagics.magics["cell"]]:
        assert f"%{magic}</span></code>" in magics, f"no section for {magic}"
    missing = [
        f"{name} {flag}"
        for name, parser in PARSERS.items()
        for action in parser._actions
        for flag in action.option_strings
        if f'<span class="pre">{flag}' not in magics
    ]
    assert missing == []
    assert "--record DIR" in magics and "--replay DIR" in magics
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for option in ("--config-path", "--max-messages", "--restore-state", "dev-broker", "log-dump"):
        assert option in cli, option


def test_no_internal_link_is_broken(site: Path) -> None:
    site = site.resolve()
    pages = {path: parse(path) for path in site.rglob("*.html") if "_static" not in path.parts}
    broken = []
    for path, page in pages.items():
        for link in page.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (path.parent / unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{path.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{path.relative_to(site)}: {link} (no such anchor)")
    assert broken == []


def test_the_readme_is_a_front_page_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 300
    assert "docs/_static/dashboard.png" in readme and (DOCS / "_static" / "dashboard.png").exists()
    for link in re.findall(r"\]\(((?:docs/|CHANGELOG)[^)#]*)", readme):
        assert (ROOT / link).exists(), f"the README links to {link}, which does not exist"


HISTORY = re.compile(
    r"\bbefore (?:them|batching|the redesign)\b|\bbefore → after\b|\bdays before\b|\bwent from\b|"
    r"\bthe same morning\b|\bmoved them\b",
    re.I,
)


def test_the_figures_pages_hold_only_the_latest_run() -> None:
    pages = [*(DOCS / "figures").glob("*.md"), DOCS / "performance-peers.md"]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert not HISTORY.findall(text), f"{page.name} holds history: {HISTORY.findall(text)}"
    assert "## Figures history" in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")


def test_the_how_to_index_links_the_pages_users_looked_for(site: Path) -> None:
    index = parse(site / "how-to" / "index.html").links
    for page in ("windows", "outputs", "sql-json", "start-paused", "recovery-time", "cleanup"):
        assert f"{page}.html" in index, f"the how-to index does not link {page}"


def test_no_text_becomes_a_mailto_link(site: Path) -> None:
    """An address-like text (``ssp@offset``) stays text: the site links to no mail address."""
    mailto = [
        f"{path.relative_to(site)}: {link}"
        for path in site.rglob("*.html")
        for link in re.findall(r'href="(mailto:[^"]*)"', path.read_text(encoding="utf-8"))
    ]
    assert mailto == []


def test_every_code_block_of_the_readme_is_closed_where_it_should_be() -> None:
    """Rendered as Markdown, the README's code blocks each have a language and hold no section heading (a
    stray ``` opens a block that swallows the rest of the README)."""
    from markdown_it import MarkdownIt

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(readme)
    fences = [token for token in tokens if token.type == "fence"]
    assert fences, "the README has code blocks"
    for fence in fences:
        line = fence.map[0] + 1 if fence.map else "?"
        assert fence.info.strip(), f"README.md:{line}: a code block without a language (a stray ```?)"
        headings = re.findall(r"^#{2,6} [A-Z].*$", fence.content, re.M)
        assert headings == [], f"README.md:{line}: a code block holds the section(s) {headings}"
    shown = [tokens[i + 1].content for i, token in enumerate(tokens) if token.type == "heading_open"]
    written = [line.lstrip("#").strip() for line in readme.splitlines() if re.match(r"^## [A-Z]", line)]
    assert all(heading in shown for heading in written), set(written) - set(shown)


@pytest.fixture(scope="module")
def offline_page(site: Path) -> Iterator[tuple[Any, list[str]]]:
    """A page of headless Chromium (1,280 px wide) that reaches no network: every request but a file's is
    refused and listed."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        unavailable(f"no chromium at {CHROMIUM} (scripts/browser-test-deps.sh installs it)")
    sync_api = require("playwright.sync_api", "the site is read in Chromium through Playwright (dev extra)")
    refused: list[str] = []

    def only_files(route: Any) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", only_files)
            yield context.new_page(), refused
        finally:
            browser.close()


def test_the_diagrams_draw_with_no_network(site: Path, offline_page: tuple[Any, list[str]]) -> None:
    page, refused = offline_page
    page.goto((site / "concepts" / "container.html").as_uri())
    diagrams = page.locator("pre.mermaid")
    assert diagrams.count() == 2
    page.locator("pre.mermaid svg").nth(1).wait_for(timeout=30_000)
    assert page.locator("pre.mermaid svg g").count() > 10  # drawn, not an error picture
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "docs-concepts-container.png"))
    assert refused == []


def test_the_configuration_reference_reads_at_1280_px(
    site: Path, offline_page: tuple[Any, list[str]]
) -> None:
    page, _refused = offline_page
    page.goto((site / "reference" / "configuration.html").as_uri())
    widths = page.evaluate(
        "[...document.querySelectorAll('article table')]"
        ".map(t => [t.scrollWidth, t.parentElement.clientWidth])"
    )
    assert len(widths) >= 5  # a table per key group
    assert all(table <= room for table, room in widths), widths
    article = page.evaluate("document.querySelector('article').getBoundingClientRect().right")
    assert article <= 1280
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "docs-configuration-1280.png"))
