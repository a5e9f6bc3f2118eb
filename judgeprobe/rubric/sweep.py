"""The rubric sweep and its analyses: items → jobs → engine → store → judgments → results.

Run directory layout (``OUT/rubric/``): ``manifest.json``, ``store.sqlite``,
``judgments.parquet`` (one row per judge × item × variant × seed), ``labels.parquet`` (the
classifier input), ``classifier_metrics.csv``, ``confusion.csv``, ``transfer.csv``,
``terms.csv``, ``transitions.csv`` and ``notes.txt``. The report reads only these files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.core.files import atomic_path
from judgeprobe.core.records import INVALID, NOT_RUN
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.runner import RunSummary
from judgeprobe.engine.settings import lanes_of
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.engine.wire import sampling_record
from judgeprobe.rubric.classify import run_probe
from judgeprobe.rubric.config import RubricConfig
from judgeprobe.rubric.data import RubricItem, items_digest
from judgeprobe.rubric.judge import JUDGE_TEMPLATE, PRESETS, RubricJob, job_key, run_rubric_job
from judgeprobe.rubric.perturb import PERTURBATIONS, REWRITE_TEMPLATES, Source, Variant, provided
from judgeprobe.rubric.transitions import transition_table
from judgeprobe.runs.manifest import provenance, server_record
from judgeprobe.runs.rundir import RunDir
from judgeprobe.runs.sweep import JobType, judges_open, run_sweep

RESULTS = [
    f"{stem}.csv"
    for stem in ("classifier_metrics", "confusion", "transfer", "terms", "transitions")
]


def sources(cfg: RubricConfig) -> dict[Variant, Source]:
    """Variant → where its counterfactual text comes from."""
    chosen: dict[Variant, Source] = {
        "reversed_response": cfg.reversal,
        "negated_criterion": cfg.negation,
    }
    return {PERTURBATIONS[p]: chosen[PERTURBATIONS[p]] for p in cfg.perturbations}


def check_provided(cfg: RubricConfig, items: list[RubricItem]) -> list[str]:
    """Notes on items that lack a provided counterfactual; an error when none has it."""
    notes = []
    flags = {"reversed_response": "--reversal llm", "negated_criterion": "--negation rule or llm"}
    for variant, source in sources(cfg).items():
        if source != "provided":
            continue
        missing = sum(not provided(i, variant) for i in items)
        if missing == len(items):
            raise JudgeprobeError(
                f"{cfg.items}: no item has a {variant}; provide one or use {flags[variant]}"
            )
        if missing:
            notes.append(f"{missing} of {len(items)} items have no {variant}: left out of it")
    return notes


def rubric_jobs(cfg: RubricConfig, items: list[RubricItem]) -> Iterator[RubricJob]:
    """Every rubric judgment of the config, one job per judge, item, variant and seed."""
    sampling = PRESETS[cfg.preset]
    for judge in cfg.judges:
        for item in items:
            variants: list[tuple[Variant, Source | None]] = [("original", None)]
            variants += [
                (variant, source)
                for variant, source in sources(cfg).items()
                if source != "provided" or provided(item, variant)
            ]
            for seed in cfg.seeds:
                for variant, source in variants:
                    key = job_key(judge.name, item, variant, source, seed, sampling, cfg.max_tokens)
                    yield RubricJob(key, judge.name, item, variant, source, seed)


def rubric_rows(jobs: Iterable[RubricJob], store: Store) -> pl.DataFrame:
    """One row per planned rubric judgment (Invalid "not run" where none is stored)."""
    rows = []
    for job in jobs:
        o = store.get_outcome(job.key)
        item = job.item
        rows.append(
            {
                "judge": job.judge,
                "item_id": item.item_id,
                "split": item.split,
                "domain": item.domain,
                "variant": job.variant,
                "source": job.source or "",
                "seed": job.seed,
                "verdict": o.verdict if o else INVALID,
                "expected": item.expected,
                "criterion": item.criterion,
                "criterion_used": (o.details.get("criterion") if o else None) or item.criterion,
                "counterfactual": (o.details.get("counterfactual") if o else None) or "",
                "explanation": o.explanation if o else "",
                "invalid_reason": o.invalid_reason if o else NOT_RUN,
                "latency_s": o.latency_s if o else 0.0,
                "prompt_tokens": o.prompt_tokens if o else 0,
                "completion_tokens": o.completion_tokens if o else 0,
                "attempts": o.attempts if o else 0,
                "reasks": o.reasks if o else 0,
            }
        )
    return pl.DataFrame(rows, schema_overrides={"expected": pl.String})


def rubric_job_type(cfg: RubricConfig, items: list[RubricItem], out: Path) -> JobType[RubricJob]:
    """The rubric probe as a job type of the shared runner; rows go to ``out/judgments.parquet``.

    Two lanes per server slot: a job may first ask for a rewrite.
    """
    sampling = PRESETS[cfg.preset]

    async def make(job: RubricJob, endpoint: Endpoint, store: Store) -> Outcome:
        return await run_rubric_job(job, endpoint, store, sampling, cfg.max_tokens)

    def rows(jobs: Iterable[RubricJob], store: Store, _: dict[str, str]) -> pl.DataFrame:
        frame = rubric_rows(jobs, store)
        with atomic_path(RunDir(out).judgments) as tmp:
            frame.write_parquet(tmp)
        return frame

    return JobType(
        plan=lambda _: rubric_jobs(cfg, items),
        make=make,
        rows=rows,
        manifest=lambda endpoints: manifest(cfg, items, endpoints),
        planned=sum(1 for _ in rubric_jobs(cfg, items)),
        lanes=lanes_of(cfg.judges, per_slot=2),
    )


async def judge_all(
    cfg: RubricConfig, items: list[RubricItem], out: Path, console: Console, *, progress: bool
) -> tuple[pl.DataFrame, RunSummary]:
    """Probe the judges, run every job not already final, return the judgments."""
    kind = rubric_job_type(cfg, items, out)
    async with judges_open(cfg.judges, cfg.engine, console) as endpoints:
        swept = await run_sweep(
            kind, endpoints, cfg.engine, out, console, show_progress=progress,
            opened=lambda: console.print(f"{kind.planned} rubric judgments planned → {out}"),
        )  # fmt: skip
    return swept.judgments, swept.summary


def manifest(
    cfg: RubricConfig, items: list[RubricItem], endpoints: dict[str, Endpoint]
) -> dict[str, Any]:
    """The rubric run's manifest: config, templates and servers, for reproduction."""
    templates = [JUDGE_TEMPLATE, *REWRITE_TEMPLATES.values()]
    return {
        **provenance("rubric", cfg.digest(), templates),
        "run_id": f"{cfg.name}-{cfg.digest()[:8]}",
        "config": cfg.model_dump(mode="json", exclude={"judges"}),
        "sampling": PRESETS[cfg.preset].model_dump(),
        "determinism": PRESETS[cfg.preset].determinism(
            cfg.seeds[0], batch_invariant=all(j.batch_invariant for j in cfg.judges)
        ),
        "items": {"source": cfg.items, "n": len(items), "digest": items_digest(items)},
        "judges": [
            {
                **server_record(n, e),
                "sampling": sampling_record(e.info.backend, PRESETS[cfg.preset], cfg.seeds),
            }
            for n, e in endpoints.items()
        ],
    }


# --- analyses ---------------------------------------------------------------------------


def labels_from(judgments: pl.DataFrame) -> pl.DataFrame:
    """One label per (judge, item).

    The majority verdict on the original pair over seeds (Invalid verdicts and ties between seeds
    left out).
    """
    original = judgments.filter(
        (pl.col("variant") == "original") & pl.col("verdict").is_in(["satisfied", "violated"])
    )
    return (
        original.group_by("judge", "item_id", maintain_order=True)
        .agg(
            pl.col("criterion", "split").first(),
            sat=(pl.col("verdict") == "satisfied").sum(),
            n=pl.len(),
        )
        .filter(pl.col("sat") * 2 != pl.col("n"))
        .with_columns(
            label=pl.when(pl.col("sat") * 2 > pl.col("n"))
            .then(pl.lit("satisfied"))
            .otherwise(pl.lit("violated")),
            words=pl.col("criterion").str.split(" ").list.len(),
        )
        .drop("sat", "n")
    )


def labels_from_items(items: list[RubricItem]) -> pl.DataFrame:
    """Labels given in the file itself (``judge_label``), judge name ``file``."""
    rows = [
        {
            "judge": "file",
            "item_id": i.item_id,
            "criterion": i.criterion,
            "split": i.split,
            "label": i.judge_label,
            "words": len(i.criterion.split(" ")),
        }
        for i in items
        if i.judge_label is not None
    ]
    return pl.DataFrame(rows)


def pairs_from(judgments: pl.DataFrame) -> pl.DataFrame:
    """Before/after verdicts per counterfactual pair; ``expected`` only for response reversal."""
    keys = ["judge", "item_id", "seed"]
    before = judgments.filter(pl.col("variant") == "original").select(
        *keys, "expected", before="verdict"
    )
    after = judgments.filter(pl.col("variant") != "original").select(
        *keys, "variant", after="verdict"
    )
    names = {v: k for k, v in PERTURBATIONS.items()}
    return after.join(before, on=keys, how="inner").with_columns(
        perturbation=pl.col("variant").replace_strict(names),
        expected=pl.when(pl.col("variant") == "reversed_response").then(pl.col("expected")),
    )


def analyse(
    out: Path,
    judgments: pl.DataFrame | None,
    labels: pl.DataFrame,
    cfg: RubricConfig,
    notes: list[str],
    seed: int = 0,
) -> dict[str, pl.DataFrame]:
    """Run both analyses and write their tables into ``out``; return them by file stem."""
    out.mkdir(parents=True, exist_ok=True)
    run = RunDir(out)
    for stale in [*RESULTS, run.labels.name]:  # a rerun never shows an older analysis
        (out / stale).unlink(missing_ok=True)
    tables: dict[str, pl.DataFrame] = {}
    if not labels.is_empty():
        labels.write_parquet(run.labels)
        probe = run_probe(labels, cfg.classifiers, cfg.transformer_dir or None, cfg.resamples, seed)
        tables.update(probe.frames())
        notes = [*notes, *probe.notes]
    else:
        notes = [*notes, "no valid labels: the rubric-only probe was skipped"]
    if judgments is not None and (judgments["variant"] != "original").any():
        tables["transitions"] = transition_table(pairs_from(judgments), cfg.resamples, seed)
    for stem, table in tables.items():
        if not table.is_empty():
            table.write_csv(out / f"{stem}.csv", float_precision=6)
    run.notes.write_text("".join(f"{n}\n" for n in notes), encoding="utf-8")
    return tables
