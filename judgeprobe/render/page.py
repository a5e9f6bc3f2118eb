"""Report pages from sections: one Markdown file and one self-contained HTML page.

Shared by the cue report, the rubric report and the judge card, so each of them builds a list
of ``Section``s and none imports another's page code.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import polars as pl
from markupsafe import Markup

from judgeprobe.core.files import write_atomic
from judgeprobe.render.tables import header_and_rows, markdown_text, to_markdown
from judgeprobe.render.templating import page
from judgeprobe.runs.rundir import RunDir


@dataclass
class Section:
    """One report section.

    A figure is a PNG, or the one line that replaces an empty chart; ``sentences`` are a bulleted
    list; ``html`` is a block for report.html only, rendered by a template
    (``templating.fragment``).
    """

    title: str
    note: str = ""
    figures: list[tuple[str, bytes | str]] = field(default_factory=list)
    tables: list[pl.DataFrame] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    html: Markup = field(default_factory=Markup)


def figures(**charts: bytes | str | None) -> list[tuple[str, bytes | str]]:
    """The charts that have rows: PNGs, and lines for those with nothing to draw."""
    return [(name, chart) for name, chart in charts.items() if chart]


def render(run: RunDir, title: str, meta: list[str], sections: list[Section]) -> tuple[str, str]:
    """The report's Markdown and HTML pages; its plots are written into the run's ``plots``."""
    plots_dir = run.plots
    plots_dir.mkdir(exist_ok=True)
    text = markdown_text
    md = [f"# {text(title)}", "", *[f"- {text(m)}" for m in meta], ""]
    shown = []
    for s in sections:
        md += [f"## {text(s.title)}", ""] + ([text(s.note), ""] if s.note else [])
        if s.sentences:
            md += [*[f"- {text(x)}" for x in s.sentences], ""]
        charts = []
        for name, png in s.figures:
            if isinstance(png, str):  # a chart with nothing to draw: its one line
                md += [f"*{text(png)}*", ""]
                charts.append({"name": name, "line": png})
                continue
            write_atomic(plots_dir / f"{name}.png", png)
            md += [f"![{name}]({plots_dir.name}/{name}.png)", ""]
            charts.append({"name": name, "line": "", "png": base64.b64encode(png).decode()})
        tables = [t for t in s.tables if not t.is_empty()]
        md += [line for t in tables for line in (to_markdown(t), "")]
        texts = [header_and_rows(t) for t in tables]
        shown.append({"section": s, "figures": charts, "tables": texts})
    html = page("report.html.j2", title=title, meta=meta, sections=shown)
    return "\n".join(md), html
