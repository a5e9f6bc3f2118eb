"""``python -m judgeprobe.run``: run a cue-probe sweep end to end.

config → items → probe judges → plan → engine → store → judgments.parquet → metrics.
With no arguments: the default sweep on the bundled sample against the embedded judge.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from rich.console import Console

from judgeprobe import JudgeprobeError
from judgeprobe.cli import main_guard
from judgeprobe.conditions import Condition, builtin_conditions, parse_conditions
from judgeprobe.config import JudgeConfig, SweepConfig, load_config, parse_judge_flag
from judgeprobe.corpus import load_items
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.probe import probe_endpoint
from judgeprobe.engine.progress import SweepProgress
from judgeprobe.engine.runner import RunOutcome, run_jobs
from judgeprobe.engine.store import Outcome, Store
from judgeprobe.judgments import judgment_rows, write_judgments
from judgeprobe.manifest import build_manifest, write_json
from judgeprobe.metrics.lexicons import load_lexicons
from judgeprobe.metrics.outcome import outcome_table
from judgeprobe.metrics.table import print_table, write_csv
from judgeprobe.plan import build_protocols, count, plan
from judgeprobe.protocols.job import Job, run_job
from judgeprobe.records import Item
from judgeprobe.report.build import build_report

EXIT_INCOMPLETE = 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m judgeprobe.run", description=__doc__)
    p.add_argument("--config", type=Path, help="sweep config (TOML); default: the default sweep")
    p.add_argument(
        "--judge", action="append", default=[], metavar="NAME=URL",
        help="judge endpoint (repeatable); replaces the config's judges, keeping settings by name",
    )  # fmt: skip
    p.add_argument("--out", type=Path, help="run directory (default: runs/<config name>)")
    p.add_argument(
        "--resume", action="store_true", help="continue the run in --out, reusing results"
    )
    p.add_argument("--limit", type=int, help="only the first N items")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _apply_flags(cfg: SweepConfig, judge_flags: list[str], limit: int | None) -> SweepConfig:
    update: dict[str, object] = {}
    if judge_flags:
        known = {j.name: j for j in cfg.judges}
        judges = []
        for flag in judge_flags:
            name, url = parse_judge_flag(flag)
            base = known.get(name)
            try:
                judges.append(
                    base.model_copy(update={"url": url.rstrip("/")})
                    if base
                    else JudgeConfig(name=name, url=url)
                )
            except ValueError as exc:
                raise JudgeprobeError(f"--judge {flag!r}: {exc}") from None
        update["judges"] = judges
    if limit is not None:
        if limit < 0:
            raise JudgeprobeError("--limit must be >= 0")
        update["limit"] = limit
    if not update:
        return cfg
    try:
        return SweepConfig.model_validate({**cfg.model_dump(), **update})
    except ValueError as exc:
        raise JudgeprobeError(f"command line: {exc}") from None


def _conditions(cfg: SweepConfig) -> dict[str, Condition]:
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    unknown = [c for c in cfg.conditions if c not in conditions]
    if unknown:
        raise JudgeprobeError(
            f"unknown condition {unknown[0]!r} (known: {', '.join(sorted(conditions))}; "
            "define new ones under [cues.NAME] in the config)"
        )
    return conditions


def _check_run_dir(out: Path, resume: bool, cfg: SweepConfig) -> None:
    manifest = out / "manifest.json"
    if manifest.exists() and not resume:
        raise JudgeprobeError(
            f"{out} already holds a run; pass --resume to continue it or choose another --out"
        )
    if manifest.exists():
        import orjson

        try:
            previous = orjson.loads(manifest.read_bytes()).get("config_digest")
        except orjson.JSONDecodeError:
            previous = None
        if previous != cfg.digest():
            raise JudgeprobeError(
                f"{out} was made with a different config; resume it with the same config "
                "or choose another --out"
            )


async def _sweep(
    cfg: SweepConfig,
    items: list[Item],
    conditions: dict[str, Condition],
    out: Path,
    console: Console,
    show_progress: bool,
) -> RunOutcome:
    endpoints: dict[str, Endpoint] = {}
    try:
        for judge in cfg.judges:
            endpoints[judge.name] = await probe_endpoint(judge, cfg.engine)
            info = endpoints[judge.name].info
            console.print(
                f"judge [bold]{judge.name}[/] at {judge.url}: {info.model} "
                f"({info.backend}, fingerprint {info.fingerprint})"
            )
        # Everything is validated: only now does the run directory get written.
        out.mkdir(parents=True, exist_ok=True)
        run_id = f"{cfg.name}-{cfg.digest()[:8]}"
        write_json(out / "manifest.json", build_manifest(run_id, cfg, endpoints, conditions))
        store = Store(out / "store.sqlite")
        try:
            planned = count(cfg, len(items), conditions)
            per_protocol = ", ".join(f"{k} {v}" for k, v in planned.requests.items())
            console.print(
                f"{planned.judgments} judgments planned ({sum(planned.requests.values())} "
                f"requests before cache: {per_protocol}) → {out}"
            )

            async def handle(job: Job) -> Outcome:
                return await run_job(job, endpoints[job.judge], store, cfg.sampling)

            workers = {j.name: 2 * j.concurrency for j in cfg.judges}
            with SweepProgress(planned.judgments, console, enabled=show_progress) as progress:
                outcome = await run_jobs(
                    plan(cfg, items, conditions, endpoints), handle, workers, store, progress,
                    cfg.engine.sweep_deadline_s,
                )  # fmt: skip
            fingerprints = {name: ep.info.fingerprint for name, ep in endpoints.items()}
            frame = write_judgments(
                judgment_rows(run_id, plan(cfg, items, conditions, endpoints), store),
                out / "judgments.parquet",
                fingerprints,
            )
        finally:
            store.close()
    finally:
        for endpoint in endpoints.values():
            await endpoint.close()
    table = outcome_table(frame)
    write_csv(table, out / "metrics.csv")
    print_table(table)
    report = build_report(out, load_lexicons(None))
    console.print(f"report: {report}")
    counts = frame["verdict"].value_counts()
    n_invalid = int(counts.filter(counts["verdict"] == "Invalid")["count"].sum())
    console.print(
        f"{frame.height} judgments ({frame.height - n_invalid} valid, {n_invalid} invalid); "
        f"sent {outcome.sent}, reused {outcome.skipped}; wrote {out}/judgments.parquet, "
        "metrics.csv, manifest.json"
    )
    return outcome


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cfg = _apply_flags(load_config(args.config), args.judge, args.limit)
    conditions = _conditions(cfg)
    items = [i for i in load_items(cfg.items) if not cfg.subsets or i.subset in cfg.subsets]
    if not items:
        raise JudgeprobeError(f"items {cfg.items}: no item in subsets {', '.join(cfg.subsets)}")
    items = items[: cfg.limit] if cfg.limit else items
    for item in items:  # fail on an unresolvable cue before any request is sent
        for name in cfg.conditions:
            conditions[name].resolve(item)
    build_protocols(cfg)
    out = args.out or Path("runs") / cfg.name
    _check_run_dir(out, args.resume, cfg)
    console = Console(stderr=True, soft_wrap=True)
    start = time.monotonic()
    outcome = asyncio.run(_sweep(cfg, items, conditions, out, console, not args.no_progress))
    console.print(f"done in {time.monotonic() - start:.1f}s")
    if outcome.deadline_hit:
        console.print("[yellow]sweep deadline reached: unfinished requests are Invalid (not run); "
                      "rerun with --resume[/]")  # fmt: skip
        return EXIT_INCOMPLETE
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
