"""The documentation site builds in strict mode, and every relative link in it resolves.

``mkdocs.yml`` makes a broken link, a missing anchor and a page left out of the navigation a
warning, which ``--strict`` turns into a failed build. The built pages are then checked here
as a reader meets them: every relative ``href`` of every page must reach a page of the site
and, when it has a fragment, an ``id`` on that page. README.md is not part of the site, so its
links into ``docs/`` are checked against the built pages the same way (the site's anchors
follow GitHub's slug rule, so one anchor serves both), and its other relative links must name
files of the repository. Citations of the docs in the code ("docs/metrics.md, "SENS"") must
name a page and a section it has.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE_FILES = ("mkdocs.yml", "docs", "README.md")  # what a build reads (index.md includes README)
CITING = ("judgeprobe", "tests", "bench", "servers", "experiments")


class Page(HTMLParser):
    """The anchors a built page offers (``id``s, and ``name``s of ``<a>``) and the links it has."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if found.get(key):
                self.ids.add(str(found[key]))
        if tag == "a" and found.get("href"):
            self.links.append(str(found["href"]))


def read_site(site: Path) -> dict[PurePosixPath, Page]:
    """Every built HTML page, by its path inside the site."""
    pages = {}
    for path in sorted(site.rglob("*.html")):
        page = Page()
        page.feed(path.read_text(encoding="utf-8"))
        pages[PurePosixPath(path.relative_to(site).as_posix())] = page
    return pages


def _normal(path: PurePosixPath) -> PurePosixPath | None:
    """``path`` with ``..`` and ``.`` resolved; None when it climbs out of the site."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePosixPath(*parts)


def _is_external(href: str) -> bool:
    split = urlsplit(href)
    return bool(split.scheme or split.netloc)


def check_target(
    pages: dict[PurePosixPath, Page], site: Path, target: PurePosixPath | None, fragment: str
) -> str | None:
    """Why a link to ``target#fragment`` inside the site does not resolve; None when it does."""
    if target is None:
        return "leaves the site"
    if (site / target).is_dir() or str(target) in ("", "."):
        target = target / "index.html"
    if target not in pages:
        return None if (site / target).is_file() else f"no page {target}"
    if fragment and fragment not in pages[target].ids:
        return f"{target} has no anchor #{fragment}"
    return None


def broken_site_links(site: Path) -> list[str]:
    """Every relative link of the built site that reaches no page, or no anchor on it."""
    pages = read_site(site)
    broken = []
    for here, page in pages.items():
        for href in page.links:
            if _is_external(href) or href.startswith("/"):
                continue
            split = urlsplit(href)
            path = unquote(split.path)
            target = _normal(here.parent / path) if path else here
            if path.endswith("/") and target is not None:
                target = target / "index.html"
            why = check_target(pages, site, target, unquote(split.fragment))
            if why:
                broken.append(f"{here}: {href}: {why}")
    return broken


_CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def markdown_links(text: str) -> list[str]:
    """The targets of the inline links of a Markdown text, code left out."""
    return _LINK.findall(_CODE.sub("", text))


def built_page(doc: PurePosixPath) -> PurePosixPath:
    """The built page of ``docs/``-relative Markdown file (directory URLs: ``x.md`` → ``x/``)."""
    stem = doc.with_suffix("")
    if stem.name == "index":
        return stem.parent / "index.html"
    return stem / "index.html"


def broken_readme_links(readme: str, root: Path, site: Path) -> list[str]:
    """README.md's relative links that name no file, or no anchor of the built ``docs/`` page."""
    pages = read_site(site)
    broken = []
    for href in markdown_links(readme):
        if _is_external(href):
            continue
        split = urlsplit(href)
        path, fragment = unquote(split.path), unquote(split.fragment)
        target = _normal(PurePosixPath(path)) if path else None
        if target is None or not (root / target).exists():
            broken.append(f"README.md: {href}: no file {path or '(empty)'}")
            continue
        if target.parts[0] == "docs" and target.suffix == ".md":
            page = built_page(PurePosixPath(*target.parts[1:]))
            why = check_target(pages, site, page, fragment)
            if why:
                broken.append(f"README.md: {href}: {why}")
        elif fragment:
            broken.append(f"README.md: {href}: an anchor outside docs/ cannot be checked")
    return broken


def build(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the site under ``root`` into ``out``."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.fail("mkdocs is not installed: pip install -e '.[docs]' (make install does)")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", "mkdocs.yml",
               "-d", str(out)]  # fmt: skip
    return subprocess.run(command, cwd=root, env=env, capture_output=True, text=True,
                          timeout=300, check=False)  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    done = build(ROOT, out)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


def test_the_site_builds_in_strict_mode_and_every_link_between_pages_resolves(
    site: Path,
) -> None:
    sources = (p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    built = {built_page(PurePosixPath(p)) for p in sources}
    assert PurePosixPath("metrics/index.html") in built
    assert built <= set(read_site(site))  # every page of docs/ is on the site
    assert broken_site_links(site) == []


def test_readme_links_into_the_docs_resolve(site: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = markdown_links(readme)
    assert any(link.startswith("docs/") for link in links)
    assert broken_readme_links(readme, ROOT, site) == []


def test_a_broken_link_or_anchor_is_found(site: Path) -> None:
    readme = "See [the card](docs/card.md#rows), [gone](docs/card.md#no-such-row) and [x](nope.md)."
    assert broken_readme_links(readme, ROOT, site) == [
        "README.md: docs/card.md#no-such-row: card/index.html has no anchor #no-such-row",
        "README.md: nope.md: no file nope.md",
    ]
    page = site / "card" / "index.html"
    original = page.read_text(encoding="utf-8")
    try:
        page.write_text(original + '<a href="../metrics/#no-such-rule">x</a>', encoding="utf-8")
        assert broken_site_links(site) == [
            "card/index.html: ../metrics/#no-such-rule: metrics/index.html has no anchor "
            "#no-such-rule"
        ]
    finally:
        page.write_text(original, encoding="utf-8")


def test_the_strict_build_fails_on_a_broken_anchor_and_on_a_page_outside_the_nav(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in SITE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name)
        else:
            shutil.copy(source, copy / name)
    card = copy / "docs" / "card.md"
    card.write_text(card.read_text(encoding="utf-8") + "\n[x](metrics.md#no-such-rule)\n")
    (copy / "docs" / "orphan.md").write_text("# Not in the navigation\n", encoding="utf-8")
    done = build(copy, tmp_path / "site")
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "does not contain an anchor '#no-such-rule'" in output
    assert "orphan.md" in output


_CITATION = re.compile(r'docs/([\w./-]+\.md)(?:[,:]?(?:\s|#)*\(?"([^"\n]+)")?')


def headings(page: Path) -> set[str]:
    """The headings of a Markdown page, lower-cased, code left out."""
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.S | re.M)
    return {m.strip().lower() for m in re.findall(r"^#+\s+(.+)$", text, flags=re.M)}


def broken_citations(text: str, docs: Path) -> list[str]:
    """Citations ``docs/PAGE.md`` (and a ``"Section"`` after it) that ``docs`` does not have."""
    broken = []
    for page, section in _CITATION.findall(text):
        if not (docs / page).is_file():
            broken.append(f"docs/{page}: no such page")
        elif section and section.lower() not in headings(docs / page):
            broken.append(f'docs/{page}: no section "{section}"')
    return broken


def test_every_citation_of_the_docs_names_a_page_and_section_they_have() -> None:
    docs = ROOT / "docs"
    texts = {".py", ".toml", ".md", ".yaml", ".sh", ".mk"}
    files = [p for d in CITING for p in sorted((ROOT / d).rglob("*")) if p.suffix in texts]
    found = {}
    for path in (p for p in files if p.is_file() and p.name != Path(__file__).name):
        if broken := broken_citations(path.read_text(encoding="utf-8"), docs):
            found[str(path.relative_to(ROOT))] = broken
    assert found == {}
    assert broken_citations('(docs/metrics.md, "SENS") docs/metrics.md', docs) == []
    assert broken_citations('docs/metrics.md,\n# "No such part" docs/gone.md', docs) == [
        'docs/metrics.md: no section "No such part"',
        "docs/gone.md: no such page",
    ]
