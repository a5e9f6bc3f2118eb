"""Report pages from sections: one Markdown file and one self-contained HTML page.

Shared by the cue report, the rubric report and the judge card, so each of them builds a list
of ``Section``s and none imports another's page code.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from judgeprobe.core.files import write_atomic
from judgeprobe.render.tables import to_html, to_markdown

CSS = (
    "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
    "color:#222}table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}th{background:#f3f3f3}"
    "td:first-child,td:nth-child(2),td:nth-child(3){text-align:left}img{max-width:100%}"
    "h2{border-bottom:1px solid #ddd;padding-bottom:3px}.note{color:#555;font-size:13px}"
)


@dataclass
class Section:
    """One report section.

    A figure is a PNG, or the one line that replaces an empty chart; ``sentences`` are a bulleted
    list; ``html`` is a block for report.html only.
    """

    title: str
    note: str = ""
    figures: list[tuple[str, bytes | str]] = field(default_factory=list)
    tables: list[pl.DataFrame] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    html: str = ""


def figures(**charts: bytes | str | None) -> list[tuple[str, bytes | str]]:
    """The charts that have rows: PNGs, and lines for those with nothing to draw."""
    return [(name, chart) for name, chart in charts.items() if chart]


def render(run_dir: Path, title: str, meta: list[str], sections: list[Section]) -> tuple[str, str]:
    """Write the report's Markdown and HTML pages and their plots into the run directory."""
    plots_dir = run_dir / "plots"
    plots_dir.mkdir(exist_ok=True)
    md = [f"# {title}", "", *[f"- {m}" for m in meta], ""]
    items = "".join(f"<li>{html.escape(m)}</li>" for m in meta)
    body = [f"<h1>{html.escape(title)}</h1>" + (f"<ul>{items}</ul>" if meta else "")]
    for s in sections:
        md += [f"## {s.title}", "", s.note, ""] if s.note else [f"## {s.title}", ""]
        body.append(f"<h2>{html.escape(s.title)}</h2>")
        if s.sentences:
            md += [*[f"- {x}" for x in s.sentences], ""]
            body.append("<ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in s.sentences))
            body.append("</ul>")
        if s.note:
            body.append(f"<p class='note'>{html.escape(s.note)}</p>")
        body.append(s.html)
        for name, png in s.figures:
            if isinstance(png, str):  # a chart with nothing to draw: its one line
                md += [f"*{png}*", ""]
                body.append(f"<p class='note empty-chart'>{html.escape(png)}</p>")
                continue
            write_atomic(plots_dir / f"{name}.png", png)
            md += [f"![{name}](plots/{name}.png)", ""]
            data = base64.b64encode(png).decode()
            body.append(f"<img alt='{name}' src='data:image/png;base64,{data}'>")
        for table in s.tables:
            if not table.is_empty():
                md += [to_markdown(table), ""]
                body.append(to_html(table))
    head = f"<meta charset='utf-8'><title>{html.escape(title)}</title><style>{CSS}</style>"
    page = f"<!doctype html><html lang='en'><head>{head}</head><body>{''.join(body)}</body></html>"
    return "\n".join(md), page
