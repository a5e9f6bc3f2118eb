"""Report tables.

Raw verdict counts, LLM vs other-source preference, cost, the cells that cannot be read with the
commonest Invalid reasons, and their text as Markdown (cells print through ``core.cells``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.core.cells import MISSING, cell, interval, interval_expr, p_value
from judgeprobe.core.records import INVALID, TIE
from judgeprobe.metrics.flags import invalid_reasons
from judgeprobe.metrics.uncertainty import ratio, unit_interval

CELL = ["judge", "protocol", "condition"]


def counts_table(j: pl.DataFrame) -> pl.DataFrame:
    """Raw counts like the paper's tables II–V and X: Tie, [1,2] (A), [2,1] (B), Invalid."""
    v = pl.col("verdict")
    return (
        j.group_by(CELL)
        .agg(
            n=pl.len(),
            Tie=(v == TIE).sum(),
            **{"[1,2]": (v == "A").sum(), "[2,1]": (v == "B").sum()},
            Invalid=(v == INVALID).sum(),
        )
        .sort(CELL)
    )


METHODS = {"textrank": "TextRank", "lexrank": "LexRank", "klsum": "KL-Sum", "sumbasic": "SumBasic"}
"""Display names of the extractive generators (``sumy:<method>`` in a candidate set)."""


def _method(generator: str, source: str) -> pl.Expr:
    """The other candidate's method, or its provenance label.

    The method is its generator, named as the paper does; the label stands in when the items do
    not say which generator wrote it.
    """
    name = pl.col(generator).fill_null("").str.split(":").list.last()
    known = pl.col(generator).fill_null("") != ""
    return pl.when(known).then(name.replace(METHODS)).otherwise(pl.col(source))


def provenance_table(j: pl.DataFrame, resamples: int, seed: int) -> pl.DataFrame:
    """Blind preference for the LLM-written candidate by the other's method (table IX).

    Under Blind, how often the LLM-written candidate is preferred, per judge × protocol × the other
    candidate's method (TextRank, LexRank, KL-Sum, SumBasic: one row each), with a 95% interval over
    documents.

    Pairs whose other candidate an LLM wrote too (content-controlled subsets that carry the
    nominal labels LLM/TradML) are left out; items without generators fall back to the
    other candidate's provenance label.
    """
    first = pl.col("source_1") == "LLM"
    llm = pl.when(first).then(pl.lit("A")).when(pl.col("source_2") == "LLM").then(pl.lit("B"))
    other_gen = pl.when(first).then("generator_2").otherwise("generator_1").fill_null("")
    blind = (
        j.filter((pl.col("condition") == BLIND) & (pl.col("verdict") != INVALID))
        .with_columns(
            llm_side=llm,
            other=pl.when(first).then(_method("generator_2", "source_2"))
            .otherwise(_method("generator_1", "source_1")),
        )
        .filter(
            pl.col("llm_side").is_not_null()
            & (pl.col("other") != "LLM")
            & ~other_gen.str.starts_with("llm:")
        )
        .with_columns(
            llm=(pl.col("verdict") == pl.col("llm_side")).cast(pl.Int64),
            tie=(pl.col("verdict") == TIE).cast(pl.Int64),
            judgments=pl.lit(1, dtype=pl.Int64),
        )
    )  # fmt: skip
    rows = []
    keys = ["judge", "protocol", "other"]
    for key, part in blind.partition_by(keys, as_dict=True).items():
        n, n_llm, n_tie = (int(part[c].sum()) for c in ("judgments", "llm", "tie"))
        lo, hi = unit_interval(
            part, ["llm", "judgments"], ratio(0, 1), resamples, seed, by="document_id"
        )
        rows.append(
            {
                "judge": key[0],
                "protocol": key[1],
                "versus": key[2],
                "n": n,
                "documents": part["document_id"].n_unique(),
                "prefers_LLM": n_llm,
                "Tie": n_tie,
                "prefers_other": n - n_llm - n_tie,
                "LLM_share": interval(n_llm / n if n else None, lo, hi),
            }
        )
    return pl.DataFrame(rows).sort(["judge", "protocol", "versus"]) if rows else pl.DataFrame()


def differences_table(tidy: pl.DataFrame) -> pl.DataFrame:
    """The paired differences of the tidy table (``diff_<metric>`` rows).

    Each cell minus the cell it is compared with, on the items both judged, with its document-level
    interval and the exact sign test where the metric is a share. (The cells' own levels are in the
    tables above; over the shared items they can differ from those.)
    """
    diffs = tidy.filter(pl.col("versus").is_not_null())
    if diffs.is_empty():
        return pl.DataFrame()
    return diffs.sort([*CELL, "metric", "versus"]).select(
        *CELL,
        pl.col("metric").str.strip_prefix("diff_"),
        "versus",
        difference=interval_expr(),
        p=pl.col("p").map_elements(p_value, return_dtype=pl.String),
        n="n",
        documents="documents",
    )


def breakdown_table(tidy: pl.DataFrame, by: str, metrics: list[str]) -> pl.DataFrame:
    """``metrics`` per value of ``by`` (domain, subset) and cell, ``value [lo, hi]`` each."""
    data = tidy.filter(pl.col("metric").is_in(metrics) & pl.col("versus").is_null())
    if data.is_empty():
        return pl.DataFrame()
    wide = data.select(by, *CELL, "metric", shown=interval_expr()).pivot(
        on="metric", index=[by, *CELL], values="shown"
    )
    present = [m for m in metrics if m in wide.columns]
    return wide.select(by, *CELL, *present).fill_null(MISSING).sort([by, *CELL])


def cost_table(j: pl.DataFrame) -> pl.DataFrame:
    """Cost by judge × protocol (the cost the paper left out).

    Latency and tokens per valid judgment; over every judgment run, the requests sent per judgment
    and, counted apart, those sent again: re-asks (a reply that did not conform), escalations (a
    reply cut at max_tokens, asked once more with a larger budget) and transport retries.
    """
    counts = ["attempts", "n_requests", "reasks", "escalations"]
    j = j.with_columns(pl.lit(0, dtype=pl.Int64).alias(c) for c in counts if c not in j.columns)
    valid = pl.col("verdict") != INVALID
    again = pl.col("n_requests") + pl.col("reasks") + pl.col("escalations")
    return (
        j.group_by(["judge", "protocol"])
        .agg(
            judgments=pl.len(),
            valid=valid.sum(),
            requests_per_judgment=pl.col("attempts").mean(),
            reasks=pl.col("reasks").sum(),
            escalations=pl.col("escalations").sum(),
            retries=(pl.col("attempts") - again).clip(lower_bound=0).sum(),
            mean_latency_s=pl.col("latency_s").filter(valid).mean(),
            p95_latency_s=pl.col("latency_s").filter(valid).quantile(0.95),
            prompt_tokens=pl.col("prompt_tokens").filter(valid).mean(),
            completion_tokens=pl.col("completion_tokens").filter(valid).mean(),
        )
        .sort(["judge", "protocol"])
    )


def unreadable_table(estimates: pl.DataFrame) -> pl.DataFrame:
    """The flagged cells of the estimates table, with the counts that decided the flag."""
    shown = ["judge", "protocol", "condition", "n", "n_valid", "n_paired", "invalid_rate", "flag"]
    return estimates.filter(pl.col("flag") != "").select(shown)


def invalid_reasons_table(j: pl.DataFrame, top: int = 3) -> pl.DataFrame:
    """The commonest Invalid reasons per judge × protocol and their share of its judgments."""
    return invalid_reasons(j, top).select("judge", "protocol", "reason", "n", "share")


def with_ci(tidy: pl.DataFrame, metrics: list[str]) -> pl.DataFrame:
    """Wide view: one row per cell, one ``value [lo, hi]`` column per metric."""
    data = tidy.filter(pl.col("metric").is_in(metrics))
    if data.is_empty():
        return pl.DataFrame()
    cells = data.select(
        *CELL,
        "metric",
        shown=interval_expr(),
    )
    wide = cells.pivot(on="metric", index=CELL, values="shown")
    present = [m for m in metrics if m in wide.columns]
    return wide.select(*CELL, *present).fill_null(MISSING)


class TableText(NamedTuple):
    """A table as text: its column names and its cells, each printed by ``core.cells.cell``."""

    header: list[str]
    rows: list[list[str]]


def header_and_rows(df: pl.DataFrame) -> TableText:
    """A table as text, for a Markdown page or a template (which escapes it)."""
    return TableText(df.columns, [[cell(v) for v in row] for row in df.iter_rows()])


MARKDOWN_SPECIAL = re.compile(r"[\\`|]|<(?=[A-Za-z/!?])")
"""What could end a cell, start a code span or open raw HTML: ``|``, a backslash, a backtick,
and ``<`` before a tag's first character (``< 0.001`` stays as it is)."""


MARKDOWN_RAW = re.compile(r"\\|<(?=[A-Za-z/!?])")
"""What could open raw HTML in Markdown prose: a tag opener, and a backslash before one."""


def markdown_text(text: str) -> str:
    """A title, note or sentence as Markdown that starts no tag (code spans left as written)."""
    return MARKDOWN_RAW.sub(lambda m: "\\" + m.group(0), text)


def markdown_cell(text: str) -> str:
    """A cell's text as Markdown that stays one literal cell.

    Specials are backslashed and lines joined by ``<br>``, so a judge's explanation or an item id
    cannot add a column, open a code span or start a tag.
    """
    escaped = MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(0), text)
    return "<br>".join(escaped.splitlines())


def to_markdown(df: pl.DataFrame) -> str:
    """A table as GitHub-flavoured Markdown for report.md and card.md, every cell escaped."""
    header, rows = header_and_rows(df)

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(markdown_cell(c) for c in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(r) for r in rows)])
