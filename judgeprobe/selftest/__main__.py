"""``judgeprobe selftest``: the known-answer self-test.

Starts a simulated judge (OpenAI-compatible, on loopback) with planted biases, runs a real
sweep against it through the whole pipeline (probe, plan, engine, store, judgments, metrics,
report, card), and checks that every planted effect is recovered: one line per effect and
protocol, exit 0 when all pass, 1 on any miss (2: bad input). ``--check-only`` checks a
finished self-test run against the biases given now, without sending anything: change a
planted value after the sweep and its lines miss. ``--battery`` runs the battery design
instead (``selftest.battery``: a battery cue and a self-preference, Baseline only; default
``--out runs/selftest-battery``); the default design and its figures are unchanged.
``--own`` runs the default design through protocol ``own`` instead: question/answer pairs,
a judge with its own MT-Bench-style prompt (bundled, ``selftest/own_prompt.txt``) whose reply is
an explanation and a final "[[A]]", "[[B]]" or "[[C]]", read by the pattern verdict (default
``--out runs/selftest-own``); every planted effect is recovered as under the built-in protocols.
``--own --score`` runs a pointwise judge instead (``selftest.pointwise``): MT-Bench's
single-answer prompt, each answer scored alone with a final "Rating: [[k]]" on 1–10, a score
``--score-shift`` points higher (default 2) for an answer wearing the favoured label; every
judgment's two scores and derived verdict, each cue's score shift (table and card, exactly) and
its LDS must come back (default ``--out runs/selftest-own-score``).
``--own --logprobs`` runs a judge read from its first token's log-probabilities instead
(``selftest.logprobs``): AlpacaEval 2's one token, m or M, P(first better) drawn per item plus
``--prob-shift`` (default 0.2) for an output wearing the favoured label; every judgment's
probabilities and verdict, each cue's probability shift (table and card, exactly) and its LDS
must come back (default ``--out runs/selftest-own-logprobs``).

``--sensitivity RATE`` plants a judge that reads (it prefers the intact text of a degraded
pair at that rate) and ``--blind first|tie`` one that does not read at all; either adds the
sensitivity conditions to the built-in sweep, and the card must call the blind judge
INSENSITIVE, never CLEAR. ``--pressure RATE`` plants a judge that gives way on that share of
items when challenged (Challenge, Disagree; never on their placebo Reask) and adds the pressure
conditions to it; the card's pressure rows must recover it exactly. ``--format RATE`` plants
a judge that prefers the summary in another form (bullets, bold, layout) on that share of
items and adds the format conditions and their placebos; ``--position-letters RATE`` and
``--position-ids RATE`` plant its first-shown lean under those label schemes and add each
scheme to the sweep (``names``), whose card row ``position (letters)``/``position (ids)``
must recover it exactly. ``--wording RATE`` plants a
judge that changes its verdict on that share of items under each paraphrase of its prompt (never
under the original) and judges every Blind showing under every wording the protocols ship (with
``--own``: the bundled prompt's two paraphrases as the judge's ``wordings``); the card's wording
rows must recover the flip share and Fleiss' κ exactly.

``--logs`` writes judge logs in every supported format from a simulated judge with planted
position, length, self-preference and unreadable rates and planted human labels, reads each
back with ``judgeprobe logs`` and checks every observed card figure equals the one counted from
the judge's decisions (``selftest.logs``; default ``--out runs/selftest-logs``).
``--calibrate`` writes a simulated run instead (``selftest.calibration``: 2,000 items between
two models, a judge biased toward ``model-a``, one human label on 150 random items in
labels.parquet; default ``--out runs/selftest-calibrate``), runs ``judgeprobe calibrate`` on
it and checks that the calibrated interval holds model-a's true human win rate, which the
judge alone misses (exit 1 when it does not).

``--coverage`` runs the coverage simulation instead (``selftest.coverage``: seeded simulated
judges with known true values, every interval kind × documents × items per document × value)
and prints each table, then the card's verdict error rates on simulated judges
(``selftest.verdict_rates``, ``--cards`` cards per judge and design), and the same rates under a
sequential design (``selftest.sequential_rates``: the default sweep at 1,000 documents in rounds
of 100, a quarter as many runs); exit 1 when an unflagged interval covers less than 93% or a
verdict error rate is above its bound.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import polars as pl
from pydantic import ValidationError

from judgeprobe import JudgeprobeError, first_error
from judgeprobe.calibrate.__main__ import main as calibrate_main
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.render import summary
from judgeprobe.card.rows import Card
from judgeprobe.conditions import Condition, builtin_conditions, parse_conditions
from judgeprobe.core.cli import command_parser, guarded
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.item_selection import sweep_items
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.metrics.uncertainty import Method
from judgeprobe.runs.rundir import RunDir, check_run_dir
from judgeprobe.selftest import coverage
from judgeprobe.selftest.battery import PLANTED, battery_config, self_preference_lines
from judgeprobe.selftest.calibration import simulated_run
from judgeprobe.selftest.check import Line, check, expected
from judgeprobe.selftest.formats import FORMATS, PUBLIC
from judgeprobe.selftest.logprobs import PLANTED_PROB_SHIFT, logprob_lines, logprob_oracle
from judgeprobe.selftest.logs import Planted, run_logs_selftest
from judgeprobe.selftest.pointwise import grades_of, score_lines, score_oracle
from judgeprobe.selftest.sequential_rates import sequential_config, sequential_rates
from judgeprobe.selftest.server import PLAIN
from judgeprobe.selftest.simulator import Biases
from judgeprobe.selftest.sweep import JUDGE, default_config, own_config, run_sweep
from judgeprobe.selftest.verdict_rates import default_design, format_rates, verdict_rates

DEFAULT_ITEMS = 200
GRADED_SHIFT = 0.5  # --own inspect: one grade up (I to P, P to C) for the favoured label
SEQUENTIAL_DOCUMENTS = 1_000  # --coverage: the default sweep as a sequential design, rounds of 100
PLANTED_SHIFT = 2.0  # --own --score: points for the favoured label, unless --score-shift says
RESAMPLES = 2_000  # the card's intervals; the checks read point estimates and counts only
FLAGS = {
    "tie_rate": "Blind Tie share",
    "position": "non-Tie verdicts sent to the first-shown summary",
    "verbosity": "preference for a summary >= length-ratio times longer",
    "anchoring": "preference for the summary wearing the favoured label",
    "badge": "preference for the summary wearing the badge",
    "silent": "cue-moved verdicts explained without naming the cue",
    "sensitivity": "preference for the intact text of a degraded pair (reading)",
    "pressure": "verdicts given way on Challenge / Disagree (the pressure conditions)",
    "wording": "verdicts changed under each paraphrase of the prompt (the wordings)",
    "format": "preference for the summary in another form (the Format conditions)",
    "position_letters": "first-shown lean under names = letters (default: --position)",
    "position_ids": "first-shown lean under names = ids (default: --position)",
}


def _parser() -> argparse.ArgumentParser:
    p = command_parser("selftest", __doc__)
    p.add_argument("--out", type=Path, help="run directory (default runs/selftest)")
    p.add_argument("--battery", action="store_true",
                   help="the battery design: a battery cue and a self-preference")  # fmt: skip
    p.add_argument("--own", nargs="?", const="bundled", choices=FORMATS, metavar="FORMAT",
                   help="the default design through protocol own: a judge's own prompt and "
                   "[[A]]/[[B]]/[[C]] verdicts on question/answer pairs; FORMAT a public "
                   "judge's shape instead: fastchat (system + pair prompt), prometheus "
                   "(rubric, reference, [RESULT] A|B, no ties) or inspect (GRADE: C/P/I, "
                   "pointwise)")  # fmt: skip
    p.add_argument("--score", action="store_true",
                   help="with --own: a pointwise judge (its own 1-10 prompt, each answer scored "
                   "alone) with a planted score shift toward the favoured label")  # fmt: skip
    p.add_argument("--score-shift", type=float, metavar="POINTS",
                   help=f"--own --score: points added for the favoured label (default "
                   f"{PLANTED_SHIFT:g})")  # fmt: skip
    p.add_argument("--logprobs", action="store_true",
                   help="with --own: a judge read from its first token's log-probabilities "
                   "(AlpacaEval 2's m/M) with a planted probability shift")  # fmt: skip
    p.add_argument("--prob-shift", type=float, metavar="P",
                   help=f"--own --logprobs: added to P(the output wearing the favoured label "
                   f"is better) (default {PLANTED_PROB_SHIFT:g})")  # fmt: skip
    p.add_argument("--config", type=Path, help="sweep config to run instead of the built-in one")
    p.add_argument("--items", type=int, default=DEFAULT_ITEMS, help="synthetic items")
    p.add_argument("--check-only", action="store_true", help="check the run in --out; send nothing")
    p.add_argument("--logs", action="store_true",
                   help="judge logs in every format from a judge with planted position, length "
                   "and self-preference, read back by judgeprobe logs (default --out "
                   "runs/selftest-logs)")  # fmt: skip
    p.add_argument("--coverage", action="store_true",
                   help="measure the intervals' coverage by simulation instead")  # fmt: skip
    p.add_argument("--calibrate", action="store_true",
                   help="write a simulated run of a judge biased toward one model, with human "
                   "labels on a random few items, and check calibrate on it")  # fmt: skip
    p.add_argument("--judges", type=int, default=coverage.JUDGES,
                   help=f"--coverage: judges per setting (default {coverage.JUDGES})")  # fmt: skip
    p.add_argument("--cards", type=int, default=100,
                   help="--coverage: simulated cards per judge and design for the verdict "
                   "error rates (default 100)")  # fmt: skip
    p.add_argument("--seed", type=int, default=0, help="--coverage: the simulation's seed")
    p.add_argument("--method", choices=["score", "percentile"], default="score",
                   help="--coverage: the interval method (percentile: the old one)")  # fmt: skip
    _planted_flags(p)
    return p


def _planted_flags(p: argparse.ArgumentParser) -> None:
    """The simulated judge's planted biases, one flag each (``Biases``' defaults)."""
    defaults = Biases()
    for name, meaning in FLAGS.items():
        default = getattr(defaults, name)
        flag = f"--{name.replace('_', '-')}"
        shown = "" if default is None else f" (default {default})"
        p.add_argument(flag, type=float, default=default, metavar="RATE",
                       help=f"{meaning}{shown}")  # fmt: skip
    p.add_argument(
        "--blind", choices=["first", "tie"],
        help="a judge that does not read: always the first-shown summary, or always Tie",
    )  # fmt: skip
    p.add_argument(
        "--favoured-label",
        help=f"(default {defaults.favoured_label!r}; --battery: {PLANTED['favoured_label']!r})",
    )
    p.add_argument("--badge-label", default=defaults.badge_label)
    p.add_argument(
        "--self-preference",
        type=float,
        metavar="RATE",
        help="non-Tie verdicts sent to the judge's own style (default 0; "
        f"--battery: {PLANTED['self_preference']})",
    )


def _biases(args: argparse.Namespace) -> Biases:
    values = {name: getattr(args, name) for name in FLAGS}
    values |= {
        "favoured_label": args.favoured_label,
        "badge_label": args.badge_label,
        "self_preference": args.self_preference,
        "blind": args.blind,
    }
    public = PUBLIC.get(args.own or "")
    if args.score or (public is not None and public.pointwise):
        default = GRADED_SHIFT if public is not None and public.style.grades else PLANTED_SHIFT
        values["score_shift"] = default if args.score_shift is None else args.score_shift
    if public is not None and 0 not in public.style.tokens and not public.pointwise:
        if args.tie_rate not in (0.0, Biases().tie_rate):
            raise JudgeprobeError(f"--own {args.own} has no tie verdict: --tie-rate must be 0")
        values["tie_rate"] = 0.0  # the format has no tie: the planted judge never gives one
    if args.logprobs:
        values["prob_shift"] = PLANTED_PROB_SHIFT if args.prob_shift is None else args.prob_shift
    # unset: the design's own default (the battery plants a label and a self-preference)
    planted = PLANTED if args.battery else {}
    values = {k: planted.get(k, v) if v is None else v for k, v in values.items()}
    values = {k: v for k, v in values.items() if v is not None}
    try:
        return Biases.model_validate(values)
    except ValidationError as exc:
        raise JudgeprobeError(f"planted biases: {first_error(exc, value=True)}") from None


def _coverage(judges: int, seed: int, method: Method, cards: int) -> int:
    """``--coverage``: print every section's table; 1 when any row fails its bound."""
    if judges < 10:
        raise JudgeprobeError("--judges must be >= 10")
    if cards < 10:
        raise JudgeprobeError("--cards must be >= 10")
    failed = 0
    for measure in coverage.SECTIONS:
        section = measure(judges, seed, method)
        print(coverage.render(section), end="\n\n", flush=True)
        failed += section.failed
    # The card's verdicts as a test procedure: their error rates on simulated judges.
    rates = verdict_rates(cards=cards, seed=seed)
    # The same promises under a sequential design (issue 38): the card looked at every round.
    sequential = sequential_config(default_design(SEQUENTIAL_DOCUMENTS, resamples=200), 100)
    rates += sequential_rates([sequential], cards=max(cards // 4, 10), seed=seed)
    print(format_rates(rates), end="\n\n", flush=True)
    broken = sum(not r.holds for r in rates)
    print(
        f"coverage self-test {'FAILED' if failed or broken else 'passed'}: {failed} coverage rows "
        f"below the bound, {broken} verdict error rates above theirs"
    )
    return 1 if failed or broken else 0


def _logs(out: Path, seed: int) -> int:
    """``--logs``: every log format from a planted judge, every figure recovered exactly."""
    if RunDir(out).manifest_file.exists() or (out.is_dir() and any(out.iterdir())):
        raise JudgeprobeError(f"--out {out}: not empty; choose another directory")
    planted = Planted(seed=seed)
    print(f"planted: {planted}")
    if importlib.util.find_spec("inspect_ai") is None:
        print("inspect_ai is not installed (pip install 'judgeprobe[logs]'): its eval logs "
              "are left out")  # fmt: skip
    lines = run_logs_selftest(out, planted)
    for line in lines:
        print(line.text())
    missed = [line for line in lines if not line.passed]
    print(f"logs self-test {'FAILED' if missed else 'passed'}: {len(missed)} missed of "
          f"{len(lines)} lines")  # fmt: skip
    return 1 if missed else 0


def _calibrate(out: Path, seed: int) -> int:
    """``--calibrate``: a simulated run with labels, calibrated; 1 when it misses the truth."""
    check_run_dir(out, resume=False, digest="", what="run")
    truth = simulated_run(out, seed=seed)
    code = calibrate_main([str(out)])
    table = pl.read_csv(RunDir(out).calibrated).filter(pl.col("model") == "model-a")
    row = table.row(0, named=True)
    held = code == 0 and row["lo"] <= truth <= row["hi"]
    print(f"model-a's true human win rate {truth:.3f}: judge-only {row['judge_only']:.3f}, "
          f"calibrated {row['calibrated']:.3f} [{row['lo']:.3f}, {row['hi']:.3f}] "
          f"{'holds' if held else 'MISSES'} it")  # fmt: skip
    print(f"calibrate self-test {'passed' if held else 'FAILED'}: {RunDir(out).calibrated}")
    return 0 if held else 1


def _config(args: argparse.Namespace, out: Path, biases: Biases) -> Path:
    """The sweep config: the user's, the finished run's, or the design's own, written now."""
    if args.config is not None:
        load_config(args.config)  # a bad config fails here, before anything is written
        return Path(args.config)
    if args.check_only:
        return out / "selftest.toml"
    if args.battery:
        return battery_config(out, args.items, JUDGE)
    reads = biases.blind is not None or biases.sensitivity > 0
    worded = biases.wording > 0
    if args.own:
        return own_config(out, args.items, sensitivity=reads, score=args.score, wording=worded,
                          logprobs=args.logprobs, fmt=args.own)  # fmt: skip
    schemes = tuple(s for s in ("letters", "ids") if getattr(biases, f"position_{s}") is not None)
    return default_config(out, args.items, sensitivity=reads, pressure=biases.pressure > 0,
                          wording=worded, format=biases.format > 0, names=schemes)  # fmt: skip


def _own_alone(args: argparse.Namespace, biases: Biases) -> None:
    """``--own`` is a design of its own: what an own prompt cannot show is refused."""
    if args.battery or args.config is not None:
        raise JudgeprobeError("--own is a design of its own: not with --battery or --config")
    if biases.pressure > 0:
        raise JudgeprobeError("--pressure is not with --own: an own prompt has no second turn")
    if biases.position_letters is not None or biases.position_ids is not None:
        raise JudgeprobeError("--position-letters/--position-ids are not with --own: an own "
                              "prompt names the candidates itself")  # fmt: skip


def _own_designs(args: argparse.Namespace) -> None:
    """``--score`` and ``--logprobs`` (with their planted values): with ``--own``, one at a time."""
    if (args.score or args.score_shift is not None) and not args.own:
        raise JudgeprobeError("--score and --score-shift go with --own (a judge's own prompt)")
    if (args.logprobs or args.prob_shift is not None) and not args.own:
        raise JudgeprobeError("--logprobs and --prob-shift go with --own (a judge's own prompt)")
    if args.prob_shift is not None and not args.logprobs:
        raise JudgeprobeError("--prob-shift goes with --own --logprobs")
    if args.logprobs and args.score:
        raise JudgeprobeError("--logprobs and --score are two designs: give one")


def _checked(
    cfg: SweepConfig,
    conditions: dict[str, Condition],
    run: RunDir,
    judgments: pl.DataFrame,
    card: Card,
    biases: Biases,
    *,
    battery: bool,
) -> list[Line]:
    """Every line of the check: a pointwise or log-probability judge's, or the verdicts'.

    ``--own --score``: scores and their shifts; ``--own --logprobs``: probabilities and theirs.
    """
    if cfg.judges[0].reads_logprobs:  # probabilities, their shifts and the verdicts
        oracle = logprob_oracle(cfg, sweep_items(cfg), conditions, biases)
        tidy = pl.read_csv(run.metrics_ci, infer_schema_length=None)
        return logprob_lines(judgments, oracle, tidy, card, biases)
    if cfg.judges[0].pointwise:  # scores, their shifts and the derived verdicts
        oracle = score_oracle(cfg, sweep_items(cfg), conditions, biases)
        tidy = pl.read_csv(run.metrics_ci, infer_schema_length=None)
        return score_lines(judgments, oracle, tidy, card, biases, grades_of(cfg))
    oracle = expected(cfg, sweep_items(cfg), conditions, biases)
    lines = check(judgments, oracle, card, biases)
    return lines + (self_preference_lines(judgments, oracle, biases) if battery else [])


def _simulation_alone(args: argparse.Namespace) -> int | None:
    """The exit code of a mode that needs no simulated judge server, None for the others."""
    if args.coverage:
        return _coverage(args.judges, args.seed, args.method, args.cards)
    if args.logs:
        return _logs(selftest_out(args), args.seed)
    if args.calibrate:
        return _calibrate(selftest_out(args), args.seed)
    return None


def selftest_args(**given: object) -> argparse.Namespace:
    """The command's flags by their names (``items=20``, ``anchoring=0.3``), the rest default.

    How the API asks for a self-test: the same namespace the command reads.
    """
    args = _parser().parse_args([])
    unknown = sorted(set(given) - set(vars(args)))
    if unknown:
        raise JudgeprobeError(f"selftest has no option {', '.join(unknown)} (see "
                              "`judgeprobe selftest --help`)")  # fmt: skip
    for name, value in given.items():
        setattr(args, name, value)
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point of the self-test: plant biases in a simulated judge and look for them."""
    return selftest_run(_parser().parse_args(argv))


def selftest_out(args: argparse.Namespace) -> Path:
    """The run directory a self-test writes: ``--out``, else its design's own."""
    if args.out is not None:
        return Path(args.out)
    if args.logs or args.calibrate:
        return Path("runs/selftest-logs" if args.logs else "runs/selftest-calibrate")
    design = "-battery" if args.battery else "-own" if args.own else ""
    design += f"-{args.own}" if args.own in PUBLIC else ""
    design += "-score" if args.score else "-logprobs" if args.logprobs else ""
    return Path(f"runs/selftest{design}")


def selftest_run(args: argparse.Namespace) -> int:
    """The command's path after its flags are read; 0 when every planted effect came back."""
    alone = _simulation_alone(args)
    if alone is not None:
        return alone
    biases = _biases(args)
    _own_designs(args)
    if args.own:
        _own_alone(args, biases)
    if args.own in PUBLIC and (args.score or args.logprobs or biases.wording > 0):
        raise JudgeprobeError(f"--own {args.own} is a judge of its own: not with --score, "
                              "--logprobs or --wording")  # fmt: skip
    out = selftest_out(args)
    if args.items < 1:
        raise JudgeprobeError("--items must be >= 1")
    config = _config(args, out, biases)
    if args.check_only and not RunDir(out).judgments.is_file():
        raise JudgeprobeError(f"{out}: no self-test run to check (run without --check-only)")
    if not args.check_only:
        style = PUBLIC[args.own].style if args.own in PUBLIC else PLAIN
        code, log, judge = run_sweep(config, out, biases, style)
        if out.is_dir():
            (out / "selftest.log").write_text(log, encoding="utf-8")
        if code != 0:
            last = (log.strip().splitlines() or [""])[-1]
            raise JudgeprobeError(
                f"the sweep against the simulated judge failed (exit {code}): {last}"
            )
        sent = sum(judge.requests.values())
        print(f"simulated judge at {judge.url}: {sent} requests answered, "
              f"{sum(judge.unreadable.values())} unreadable")  # fmt: skip
    cfg = load_config(config)
    oracle_judge = JudgeConfig(name=JUDGE, url="http://127.0.0.1:9/v1")
    if cfg.judges and cfg.judges[0].has_prompt:  # protocol own: the judge's prompt and verdict too
        oracle_judge = cfg.judges[0].model_copy(update={"name": JUDGE, "url": oracle_judge.url})
    cfg = cfg.model_copy(update={"judges": [oracle_judge]})
    conditions = {**builtin_conditions(), **parse_conditions(cfg.cues, "config cues")}
    card = card_for_run(out, resamples=RESAMPLES)
    judgments = pl.read_parquet(RunDir(out).judgments)
    lines = _checked(cfg, conditions, RunDir(out), judgments, card, biases, battery=args.battery)
    print(f"planted: {biases.model_dump()}")
    for line in lines:
        print(line.text())
    missed = [line for line in lines if line.status == "MISS"]
    print(f"card: {summary(card)} -> {RunDir(out).card_md}")
    print(
        f"self-test {'FAILED' if missed else 'passed'}: {len(missed)} missed of {len(lines)} lines"
    )
    return 1 if missed else 0


cli = guarded(main)
"""The command as a user runs it: errors as one line, Ctrl-C as a hint, an exit code."""


if __name__ == "__main__":
    sys.exit(cli())
