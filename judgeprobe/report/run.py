"""A cue run's whole report: the report's own sections, handed every other package's.

The judge card (with the battery view), the self-preference and cue-controlled sections (runs
with such conditions) and, when the run directory holds them, the rubric probe's results and
the human review. It
lives here, the lowest package every writer of the report can import: a sweep (live or on
Ray), a batch import, ``judgeprobe report`` and a rubric run beside a cue run.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from judgeprobe.card.calibrated import calibrated_sections
from judgeprobe.card.section import card_sections
from judgeprobe.card.sequential import sequential_of
from judgeprobe.metrics.flags import Readability
from judgeprobe.metrics.load import LoadedRun
from judgeprobe.metrics.uncertainty import DEFAULT_RESAMPLES
from judgeprobe.report.compose import ReportOptions, write_report
from judgeprobe.report.controlled import controlled_sections
from judgeprobe.report.logs import logs_report
from judgeprobe.report.review import review_sections
from judgeprobe.report.rubric import rubric_sections
from judgeprobe.report.selfpref import selfpref_sections
from judgeprobe.text.lexicons import Lexicons


def run_report(
    run: LoadedRun,
    lex: Lexicons,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    console: Console | None = None,
    limits: Readability | None = None,
    by: str | None = None,
) -> Path:
    """The run's report with the judge card and any rubric results in it; the HTML path.

    A logs run's is ``report.logs``' (what the judge already said: no live design's sections).
    """
    if run.manifest.kind == "logs":
        return logs_report(run.dir.path, resamples, seed, console)
    return write_report(
        run, lex, ReportOptions(resamples, seed, limits, by), console=console,
        handed=[
            lambda j, tidy: card_sections(
                j, tidy, lex, resamples, seed, run.manifest.task, sequential_of(run.manifest)
            ),
            lambda j, _tidy: selfpref_sections(j, resamples, seed),
            lambda j, _tidy: controlled_sections(j, run.manifest, seed),
            lambda _j, _tidy: rubric_sections(run.dir),
            lambda _j, _tidy: review_sections(run, resamples, seed),
            lambda _j, _tidy: calibrated_sections(run.dir),
        ],
    )  # fmt: skip
