"""``selftest --logs``: judge logs with planted biases, written in every format, read back.

A simulated judge decides every (item, order) of a known design by fixed rules: with the
planted rates it picks the first-shown response (position), the longer one (length), its own
model's answer (self-preference), gives no readable verdict (unreadable), and else follows the
planted human label. Its decisions are written as MT-Bench pair judgments (with FastChat's
``model_answer/`` folder and the human judgments as labels), AlpacaEval annotations, a generic
CSV read through the alias table, MT-Bench single-answer scores, promptfoo results and, when
inspect_ai is installed, inspect_ai eval logs (else that format is left out, and the
command says so). Each is read by ``judgeprobe logs`` into a run
of its own, and every figure on its card must equal the one counted here from the decisions
themselves (one line per figure and format): the exact known-answer check.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import orjson
import polars as pl

from judgeprobe.core.records import INVALID, TIE, VERDICTS
from judgeprobe.logs.__main__ import main as logs_main
from judgeprobe.runs.rundir import RunDir

JUDGE = "simjudge"
GENERATORS = (JUDGE, "alpha", "beta")
PROMPT = "pair-v2"
TOLERANCE = 5e-7
"""card.csv keeps 6 decimals."""


@dataclass(frozen=True)
class Planted:
    """The simulated judge's rates (each a share of the judging calls it acts on)."""

    position: float = 0.3
    length: float = 0.2
    self_preference: float = 0.3
    unreadable: float = 0.05
    questions: int = 40
    seed: int = 0


@dataclass(frozen=True)
class Pair:
    """One item: question, generators (name order), texts, the human label."""

    qid: str
    g1: str
    g2: str
    t1: str
    t2: str
    human: str  # A, B or Tie


@dataclass(frozen=True)
class Line:
    """One recovered figure of one format."""

    fmt: str
    figure: str
    expected: float | int | None
    got: object

    @property
    def passed(self) -> bool:
        """The figure equals the expected one (to card.csv's precision)."""
        if self.expected is None or not isinstance(self.got, int | float):
            return self.expected is None and self.got is None
        return abs(float(self.got) - float(self.expected)) <= TOLERANCE

    def text(self) -> str:
        """The line the self-test prints."""
        status = "PASS" if self.passed else "MISS"
        head = f"{status}  {self.fmt:<15} {self.figure:<28}"
        return f"{head} expected {_fmt(self.expected)}  got {_fmt(self.got)}"


def _fmt(x: object) -> str:
    return f"{x:.6f}" if isinstance(x, float) else str(x)


def design(p: Planted) -> tuple[list[Pair], dict[tuple[str, str], str]]:
    """The items (every pair of generators on every question) and each answer's text."""
    rng = np.random.default_rng(p.seed)
    answers = {}
    for q in range(1, p.questions + 1):
        lengths = rng.choice(np.arange(30, 400), size=len(GENERATORS), replace=False)
        for g, n in zip(GENERATORS, lengths, strict=True):
            answers[(g, str(q))] = (f"{g} answers question {q}. " * 40)[: int(n)]
    pairs = []
    for q in range(1, p.questions + 1):
        for a, b in combinations(sorted(GENERATORS), 2):
            human = str(rng.choice(["A", "B", "Tie"], p=[0.45, 0.4, 0.15]))
            pairs.append(Pair(str(q), a, b, answers[(a, str(q))], answers[(b, str(q))], human))
    return pairs, answers


def decide(pair: Pair, rng: np.random.Generator, p: Planted, *, first_is_a: bool) -> str:
    """The judge's verdict on one showing, in candidate terms (or Invalid)."""
    u = rng.random(5)
    if u[0] < p.unreadable:
        return INVALID
    if u[1] < p.position:
        return "A" if first_is_a else "B"
    if u[2] < p.length:
        return "A" if len(pair.t1) > len(pair.t2) else "B"
    if JUDGE in (pair.g1, pair.g2) and u[3] < p.self_preference:
        return "A" if pair.g1 == JUDGE else "B"
    return pair.human


@dataclass(frozen=True)
class Decided:
    """An item and the judge's verdict in each order."""

    pair: Pair
    v12: str
    v21: str


def decisions(pairs: list[Pair], p: Planted) -> list[Decided]:
    """Both orders of every item, decided in a fixed order (seeded)."""
    rng = np.random.default_rng(p.seed + 1)
    return [
        Decided(x, decide(x, rng, p, first_is_a=True), decide(x, rng, p, first_is_a=False))
        for x in pairs
    ]


# ------------------------------------------------------------------ the oracle


def _item_verdict(verdicts: list[str]) -> str:
    if INVALID in verdicts:
        return INVALID
    return verdicts[0] if len(set(verdicts)) == 1 else "Tie"


def expected(found: list[Decided], *, both_orders: bool) -> dict[str, float | int | None]:
    """Every card figure, counted from the decisions.

    The definitions: docs/metrics.md, "Judge logs (observed, not intervened)".
    """
    out: dict[str, float | int | None] = {}
    showings = [(d, [d.v12, d.v21] if both_orders else [d.v12]) for d in found]
    n_all = sum(len(v) for _, v in showings)
    out["unreadable"] = sum(v.count(INVALID) for _, v in showings) / n_all
    if both_orders:
        units = [d for d in found if INVALID not in (d.v12, d.v21)]
        first = sum(d.v12 == "A" and d.v21 == "B" for d in units)
        second = sum(d.v12 == "B" and d.v21 == "A" for d in units)
        out["position"] = (first - second) / len(units)
        out["position consistency"] = sum(d.v12 == d.v21 for d in units) / len(units)
    jl = jd = rl = rd = 0
    for d, vs in showings:
        x = d.pair
        decisive = [v for v in vs if v in ("A", "B")]
        if len(x.t1) == len(x.t2) or not decisive:
            continue
        longer = "A" if len(x.t1) > len(x.t2) else "B"
        jl += sum(v == longer for v in decisive)
        jd += len(decisive)
        if x.human != TIE:
            rl += x.human == longer
            rd += 1
    out["length"] = jl / jd - rl / rd
    value = {"A": 1.0, "Tie": 0.5, "B": 0.0}
    diffs, agree, n_agree = [], 0, 0
    for d, vs in showings:
        x = d.pair
        valid = [v for v in vs if v != INVALID]
        verdict = _item_verdict(vs)
        if verdict != INVALID:
            n_agree += 1
            agree += verdict == x.human
        if JUDGE in (x.g1, x.g2) and valid:
            mean_a = sum(value[v] for v in valid) / len(valid)
            own = mean_a if x.g1 == JUDGE else 1 - mean_a
            ref = value[x.human] if x.g1 == JUDGE else 1 - value[x.human]
            diffs.append(own - ref)
    out[f"self-preference: {JUDGE}"] = sum(diffs) / len(diffs)
    out["agreement"] = agree / n_agree
    return out


# ------------------------------------------------------------------ the logs


def _jsonl(path: Path, rows: Sequence[Mapping[str, object]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


_MODEL = {"A": "model_1", "B": "model_2", "Tie": "tie", INVALID: "error"}


def write_mtbench(
    folder: Path, found: list[Decided], answers: dict[tuple[str, str], str]
) -> list[str]:
    """MT-Bench pair judgments, the model_answer/ folder, questions and human judgments."""
    data = folder / "mt_bench"
    (data / "model_answer").mkdir(parents=True)
    rows = []
    for n, d in enumerate(found):
        x = d.pair
        # model_1 is candidate A on even lines, B on odd ones: both listings must read the same
        swap = n % 2 == 1
        m1, m2 = (x.g2, x.g1) if swap else (x.g1, x.g2)

        def winner(v: str, *, swap: bool = swap) -> str:
            if v in ("A", "B") and swap:
                return _MODEL["B" if v == "A" else "A"]
            return _MODEL[v]

        g1 = winner(d.v21 if swap else d.v12)  # g1 shows model_1 first
        g2 = winner(d.v12 if swap else d.v21)
        rows.append({"question_id": int(x.qid), "model_1": m1, "model_2": m2, "g1_winner": g1,
                     "g2_winner": g2, "judge": [JUDGE, PROMPT], "g1_user_prompt": "",
                     "g1_judgment": f"verdict {g1}", "g2_user_prompt": "",
                     "g2_judgment": f"verdict {g2}", "turn": 1, "tstamp": 0.0})  # fmt: skip
    pair = _jsonl(folder / f"{JUDGE}_pair.jsonl", rows)
    for g in GENERATORS:
        _jsonl(data / "model_answer" / f"{g}.jsonl", [
            {"question_id": int(q), "model_id": g, "choices": [{"index": 0, "turns": [t]}]}
            for (m, q), t in answers.items() if m == g
        ])  # fmt: skip
    questions = sorted({q for _, q in answers}, key=int)
    _jsonl(data / "question.jsonl", [{"question_id": int(q), "category": "writing",
                                      "turns": [f"Question {q}?"]} for q in questions])  # fmt: skip
    human = {"A": "model_a", "B": "model_b", "Tie": "tie"}
    votes = []
    for n, d in enumerate(found):
        x = d.pair
        if n % 3 == 0:  # listed in the other order: the same item
            flipped = {"A": "model_b", "B": "model_a", "Tie": "tie"}[x.human]
            votes.append({"question_id": int(x.qid), "model_a": x.g2, "model_b": x.g1,
                          "winner": flipped, "judge": "expert_0", "turn": 1})  # fmt: skip
        else:
            votes.append({"question_id": int(x.qid), "model_a": x.g1, "model_b": x.g2,
                          "winner": human[x.human], "judge": "expert_0", "turn": 1})  # fmt: skip
    labels = _jsonl(folder / "human_judgments.jsonl", votes)
    return [str(pair), "--answers", str(data / "model_answer"), "--labels", str(labels)]


def write_alpaca(folder: Path, found: list[Decided], labels: Path) -> list[str]:
    """AlpacaEval annotations of the order-12 showings (1, 2, 1.5; null unreadable)."""
    pref = {"A": 1, "B": 2, "Tie": 1.5, INVALID: None}
    rows = [{"instruction": f"Question {d.pair.qid}?", "output_1": d.pair.t1,
             "generator_1": d.pair.g1, "output_2": d.pair.t2, "generator_2": d.pair.g2,
             "annotator": JUDGE, "preference": pref[d.v12]} for d in found]  # fmt: skip
    path = folder / "annotations.json"
    path.write_bytes(orjson.dumps(rows))
    # Labels keyed like the log: its question id is the instruction's hash.
    from judgeprobe.core.records import document_hash

    table = [{"question_id": document_hash(f"Question {d.pair.qid}?"), "generator_1": d.pair.g1,
              "generator_2": d.pair.g2, "preferred": {"A": 1, "B": 2, "Tie": "tie"}[d.pair.human],
              "annotator": "expert_0"} for d in found]  # fmt: skip
    _jsonl(labels, table)
    return [str(path), "--labels", str(labels)]


def write_generic(folder: Path, found: list[Decided], labels: Path) -> list[str]:
    """A CSV with aliased columns (model_a, answer_a, winner, …), both orders as rows."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(["id", "prompt", "model_a", "model_b", "answer_a", "answer_b", "winner", "judge",
                "rationale"])  # fmt: skip
    word = {"A": "A", "B": "B", "Tie": "tie", INVALID: "error"}
    for d in found:
        x = d.pair
        w.writerow([x.qid, f"Question {x.qid}?", x.g1, x.g2, x.t1, x.t2, word[d.v12], JUDGE, "."])
        flip = {"A": "B", "B": "A"}.get(d.v21, d.v21)  # shown swapped: a is the second here
        w.writerow([x.qid, f"Question {x.qid}?", x.g2, x.g1, x.t2, x.t1, word[flip], JUDGE, "."])
    path = folder / "judge_log.csv"
    path.write_text(out.getvalue(), encoding="utf-8")
    return [str(path), "--labels", str(labels)]


def scores(
    found: list[Decided], answers: dict[tuple[str, str], str], p: Planted
) -> dict[tuple[str, str], float | None]:
    """A pointwise judge's score of every answer (1–10; None unreadable), seeded."""
    rng = np.random.default_rng(p.seed + 2)
    out: dict[tuple[str, str], float | None] = {}
    for key in sorted(answers):
        out[key] = None if rng.random() < p.unreadable else float(rng.integers(1, 11))
    return out


def write_single(folder: Path, graded: dict[tuple[str, str], float | None]) -> list[str]:
    """MT-Bench single-answer judgments (score −1 unreadable)."""
    rows = [{"question_id": int(q), "model": g, "judge": [JUDGE, "single-v1"], "user_prompt": "",
             "judgment": f"Rating: [[{s}]]", "score": -1 if s is None else s, "turn": 1,
             "tstamp": 0.0} for (g, q), s in graded.items()]  # fmt: skip
    return [str(_jsonl(folder / f"{JUDGE}_single.jsonl", rows))]


def write_promptfoo(
    folder: Path, graded: dict[tuple[str, str], float | None], answers: dict[tuple[str, str], str]
) -> list[str]:
    """Promptfoo results: an llm-rubric score in [0, 1] per provider and test case."""
    results = []
    for (g, q), s in graded.items():
        grading = None if s is None else {
            "pass": s >= 5, "score": s / 10, "reason": "graded",
            "componentResults": [{"pass": s >= 5, "score": s / 10, "reason": "graded",
                                  "assertion": {"type": "llm-rubric", "value": "helpful"}}],
        }  # fmt: skip
        results.append({"provider": {"id": f"openai:{g}", "label": g}, "testIdx": int(q),
                        "prompt": {"raw": f"Question {q}?"}, "vars": {"q": q},
                        "response": {"output": answers[(g, q)]}, "gradingResult": grading,
                        "error": None if s is not None else "grader failed"})  # fmt: skip
    path = folder / "results.json"
    path.write_bytes(
        orjson.dumps({"evalId": "selftest", "results": {"version": 3, "results": results}})
    )
    return [str(path)]


def score_expected(graded: dict[tuple[str, str], float | None]) -> dict[str, float | int | None]:
    """Derived verdicts of every pair: counts of A, B, Tie, Invalid."""
    counts: Counter[str] = Counter()
    questions = sorted({q for _, q in graded})
    for q in questions:
        for a, b in combinations(sorted(GENERATORS), 2):
            x, y = graded[(a, q)], graded[(b, q)]
            v = INVALID if x is None or y is None else "A" if x > y else "B" if x < y else "Tie"
            counts[v] += 1
    total = sum(counts.values())
    return {"unreadable": counts[INVALID] / total, "judgments": total,
            **{f"derived {v}": counts[v] for v in VERDICTS}}  # fmt: skip


def _card(run: Path) -> dict[str, dict[str, object]]:
    rows = pl.read_csv(RunDir(run).card_csv, infer_schema_length=None)
    return {str(r["row"]).replace(" (observed)", ""): r for r in rows.iter_rows(named=True)}


def _lines(fmt: str, run: Path, want: dict[str, float | int | None]) -> list[Line]:
    card = _card(run)
    j = pl.read_parquet(RunDir(run).judgments)
    out = []
    for figure, value in want.items():
        if figure == "position consistency":
            got = card.get("position", {}).get("consistency")
        elif figure == "judgments":
            got = j.height
        elif figure.startswith("derived "):
            got = int((j["verdict"] == figure.removeprefix("derived ")).sum())
        else:
            got = card.get(figure, {}).get("effect")
        out.append(Line(fmt, figure, value, got))
    return out


def run_logs_selftest(out: Path, p: Planted, resamples: int = 200) -> list[Line]:
    """Write every format, read each back with ``judgeprobe logs``, compare every figure."""
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pairs, answers = design(p)
    found = decisions(pairs, p)
    graded = scores(found, answers, p)
    both = expected(found, both_orders=True)
    one = expected(found, both_orders=False)
    designs: list[tuple[str, list[str], dict[str, float | int | None]]] = []
    designs.append(("mtbench-pair", write_mtbench(logs, found, answers), both))
    generic_labels = logs / "labels.jsonl"
    _jsonl(generic_labels, [{"question_id": d.pair.qid, "generator_1": d.pair.g1,
                             "generator_2": d.pair.g2, "preferred": d.pair.human}
                            for d in found])  # fmt: skip
    designs.append(("generic-csv", write_generic(logs, found, generic_labels), both))
    designs.append(("alpaca", write_alpaca(logs, found, logs / "alpaca_labels.jsonl"), one))
    designs.append(("mtbench-single", write_single(logs, graded), score_expected(graded)))
    designs.append(("promptfoo", write_promptfoo(logs, graded, answers), score_expected(graded)))
    if importlib.util.find_spec("inspect_ai") is not None:  # the optional logs extra
        designs.append(("inspect", write_inspect(logs, graded, answers), inspect_expected(graded)))
    lines: list[Line] = []
    for fmt, args, want in designs:
        run = out / fmt
        code = logs_main([*args, "--out", str(run), "--resamples", str(resamples)])
        lines.append(Line(fmt, "exit code (0, 5 or 6)", 1, int(code in (0, 5, 6))))
        lines += _lines(fmt, run, want)
    return lines


def write_inspect(
    folder: Path,
    graded: Mapping[tuple[str, str], float | None],
    answers: Mapping[tuple[str, str], str],
) -> list[str]:
    """inspect_ai eval logs, one a generator (alternately ``.eval`` and ``.json``).

    Each answer's score from a model-graded scorer (``C`` from 7 up, ``P`` at 5 and 6, ``I``
    below; an unreadable score a value that is neither), graded by ``JUDGE`` bound to the
    ``grader`` model role, as ``eval(model_roles=…)`` writes it. Needs inspect_ai (the logs
    extra).
    """
    from inspect_ai.log import (
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalSample,
        EvalSpec,
        write_eval_log,
    )
    from inspect_ai.model import ModelConfig, ModelOutput
    from inspect_ai.scorer import Score

    def grade(s: float | None) -> str:
        return "?" if s is None else "C" if s >= 7 else "P" if s >= 5 else "I"

    paths = []
    for n, g in enumerate(sorted({g for g, _ in graded})):
        spec = EvalSpec(created="2026-01-01T00:00:00+00:00", task="selftest",
                        dataset=EvalDataset(), model=g, config=EvalConfig(),
                        model_roles={"grader": ModelConfig(model=JUDGE)})  # fmt: skip
        samples = [
            EvalSample(id=int(q), epoch=1, input=f"Question {q}?", target="",
                       output=ModelOutput.from_content(g, answers[(m, q)]),
                       scores={"model_graded_qa": Score(value=grade(s), explanation="graded")})
            for (m, q), s in sorted(graded.items()) if m == g
        ]  # fmt: skip
        path = folder / f"{g}.{'eval' if n % 2 == 0 else 'json'}"
        write_eval_log(EvalLog(eval=spec, samples=samples, status="success"), str(path))
        paths.append(str(path))
    return paths


def inspect_expected(
    graded: Mapping[tuple[str, str], float | None],
) -> dict[str, float | int | None]:
    """``score_expected`` of the grades inspect_ai's logs hold (C/P/I as 1, ½, 0)."""
    value = {"C": 1.0, "P": 0.5, "I": 0.0}

    def grade(s: float | None) -> float | None:
        return None if s is None else value["C" if s >= 7 else "P" if s >= 5 else "I"]

    return score_expected({k: grade(s) for k, s in graded.items()})
