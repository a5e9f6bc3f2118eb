"""``compare(runs, *, out)``: the comparison of runs, written into ``out`` whole or not at all.

The files: ``compare.csv`` (the second run against the first; ``compare_3.csv``… for further
runs, each against the first, with the same columns), ``compare.json``
(``compare.published``), ``compare.md`` and ``compare.html`` (the differences as a forest
plot, the tables, the costs and multipliers). They are written into a staging folder beside
``out`` and renamed into place, so a failure leaves no half-written comparison.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from judgeprobe import JudgeprobeError, __version__
from judgeprobe.compare.cost import cost, multipliers
from judgeprobe.compare.pairing import (
    FDR,
    ITEM,
    POWER,
    Loaded,
    check_runs,
    compare_two,
    decided,
    human_of,
    load,
    run_labels,
)
from judgeprobe.compare.published import (
    CSV_COLUMNS,
    SCHEMA_VERSION,
    ComparedRun,
    Comparison,
    PublishedComparison,
)
from judgeprobe.compare.render import page
from judgeprobe.core.files import write_atomic
from judgeprobe.metrics.uncertainty import SCORE, method_sentence
from judgeprobe.text.lexicons import Lexicons, load_lexicons

JSON = "compare.json"


def csv_name(comparison: Comparison) -> str:
    """compare.csv for the second run against the first, compare_K.csv for run K."""
    return "compare.csv" if comparison.second == 1 else f"compare_{comparison.second + 1}.csv"


def csv_frame(comparison: Comparison) -> pl.DataFrame:
    """One comparison's rows as compare.csv holds them (``CSV_COLUMNS``)."""
    rows = [{c: getattr(r, c) for c in CSV_COLUMNS} for r in comparison.rows]
    schema = {c: pl.String if c in ("judge", "protocol", "row", "verdict") else pl.Float64
              for c in CSV_COLUMNS}  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row")


def _compared_run(run: Loaded, human: pl.DataFrame | None, lex: Lexicons) -> ComparedRun:
    items = run.judgments.select(ITEM).unique().height
    return ComparedRun(path=str(run.path), run_id=run.manifest.run_id, kind=run.manifest.kind,
                       items=items, cost=cost(run, lex),
                       multipliers=multipliers(run, human))  # fmt: skip


def published(runs: Sequence[Path], lexicons: Path | None = None) -> PublishedComparison:
    """The comparison of ``runs``, each against the first (nothing written)."""
    loaded = [load(Path(p)) for p in runs]
    check_runs(loaded)
    lex = load_lexicons(lexicons)
    labels = run_labels(loaded)
    comparisons = [compare_two(loaded[0], run, k, lex, labels)
                   for k, run in enumerate(loaded[1:], start=1)]  # fmt: skip
    human = human_of(labels)
    return PublishedComparison(
        schema_version=SCHEMA_VERSION,
        judgeprobe=__version__,
        runs=[_compared_run(run, human, lex) for run in loaded],
        comparisons=decided(comparisons, FDR, POWER),
        fdr=FDR,
        power=POWER,
        intervals=method_sentence(SCORE),
    )


def _staging(out: Path) -> Path:
    """A fresh folder beside ``out`` to write into; refuses an ``out`` that is no comparison."""
    if out.exists() and not out.is_dir():
        raise JudgeprobeError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / JSON).is_file():
        raise JudgeprobeError(f"--out {out}: a folder that holds something other than a "
                              "comparison; choose another --out")  # fmt: skip
    out.parent.mkdir(parents=True, exist_ok=True)
    staged = out.parent / f".{out.name}.staging-{os.getpid()}"
    shutil.rmtree(staged, ignore_errors=True)
    staged.mkdir()
    return staged


def _write(document: PublishedComparison, staged: Path) -> None:
    for comparison in document.comparisons:
        csv_frame(comparison).write_csv(staged / csv_name(comparison))
    write_atomic(staged / JSON, document.model_dump_json(indent=2) + "\n")
    md, html = page(document, staged)
    write_atomic(staged / "compare.md", md)
    write_atomic(staged / "compare.html", html)


def compare(
    runs: Sequence[Path], *, out: Path, lexicons: Path | None = None
) -> PublishedComparison:
    """Compare ``runs`` (two or more run directories, live or logs) and write ``out``.

    Raises ``JudgeprobeError`` (one line) for fewer than two runs, a missing or unreadable run,
    runs of different tasks, or a run sharing no item with the first; ``out`` is then untouched.
    """
    document = published(runs, lexicons)
    staged = _staging(out)
    try:
        _write(document, staged)
        if out.exists():
            old = out.parent / f".{out.name}.old-{os.getpid()}"
            out.rename(old)
            staged.rename(out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            staged.rename(out)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    return document
