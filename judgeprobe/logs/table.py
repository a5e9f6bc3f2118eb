"""Log rows into the judgments table, the items' texts and the human labels.

An **item** is one (question, unordered pair of generators, turn) (docs/metrics.md, "Judge
logs"): its candidates are the two generators in name order, so candidate A is the one whose
name sorts first, whatever order a log or a labels file lists them in, and one ``item_id``
serves every judgment of it (both orders) and its labels. A pair verdict's order is ``12``
when candidate A was shown first, ``21`` when B was, and empty when the log does not say
(AlpacaEval). The question is the resampling unit (``document_id``). Scores become the derived
verdicts of every pair of generators scored on the same question and turn by the same judge
and prompt (A when s₁ > s₂, B when s₁ < s₂, Tie when equal; an unreadable score makes the pair's
verdict Invalid), as a pointwise judge's are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

import orjson
import polars as pl

from judgeprobe.core.records import JUDGMENT_SCHEMA, LABEL_SCHEMA, Verdict
from judgeprobe.logs.mtbench import Answers
from judgeprobe.logs.rows import PairRow, Row, ScoreRow, VoteRow

BLIND = "Blind"


def item_id(question_id: str, turn: int, generator_a: str, generator_b: str) -> str:
    """The one id of an item: question, turn and the pair in name order."""
    first, second = sorted((generator_a, generator_b))
    return f"{question_id}/t{turn}/{first}~{second}"


@dataclass(frozen=True, slots=True)
class LogTable:
    """The judgments table of the logs, each item's texts where known, and the human labels."""

    judgments: pl.DataFrame  # JUDGMENT_SCHEMA
    texts: dict[str, dict[str, str]]  # item_id -> document, candidate_1, candidate_2, ...
    unpaired_scores: int  # scores on a question no second generator was scored on


class _Columns:
    """The table's columns as lists, appended a judgment at a time."""

    NAMES = ("judge", "protocol", "item_id", "subset", "document_id", "domain", "generator_1",
             "generator_2", "order", "verdict", "explanation", "invalid_reason", "request_key",
             "raw_verdict", "details", "length_1", "length_2", "score_1", "score_2")  # fmt: skip

    def __init__(self) -> None:
        self.data: dict[str, list[object]] = {name: [] for name in self.NAMES}

    def add(self, **values: object) -> None:
        for name in self.NAMES:
            self.data[name].append(values.get(name))


def _length(text: str | None) -> int | None:
    return None if text is None else len(text)


class _Texts:
    """Each item's question and two responses, the first known text kept."""

    def __init__(self, answers: Answers | None) -> None:
        self.answers = answers or Answers()
        self.items: dict[str, dict[str, str]] = {}

    def response(self, given: str | None, generator: str, qid: str, turn: int) -> str | None:
        return given if given is not None else self.answers.answer(generator, qid, turn)

    def note(self, iid: str, qid: str, turn: int, question: str | None, pair: Sequence[object],
             domain: str) -> None:  # fmt: skip
        """Keep an item's texts (candidate terms) once, when both responses are known."""
        g1, g2, t1, t2 = pair
        if iid in self.items or not isinstance(t1, str) or not isinstance(t2, str):
            return
        document = question if question is not None else self.answers.question(qid, turn)
        if not document or not t1.strip() or not t2.strip():
            return
        self.items[iid] = {"item_id": iid, "document": document, "candidate_1": t1,
                           "candidate_2": t2, "generator_1": str(g1), "generator_2": str(g2),
                           "document_id": qid, "subset": f"turn {turn}",
                           "domain": domain}  # fmt: skip


def _pair(row: PairRow, out: _Columns, texts: _Texts) -> None:
    g1, g2 = sorted((row.first, row.second))
    a_first = row.first == g1
    t_first = texts.response(row.response_first, row.first, row.question_id, row.turn)
    t_second = texts.response(row.response_second, row.second, row.question_id, row.turn)
    t1, t2 = (t_first, t_second) if a_first else (t_second, t_first)
    verdict: Verdict
    if row.winner is None:
        verdict = "Invalid"
    elif row.winner == "tie":
        verdict = "Tie"
    else:
        verdict = "A" if (row.winner == "first") == a_first else "B"
    details = None
    if row.p_second is not None:
        details = orjson.dumps({"P(B)": row.p_second if a_first else 1 - row.p_second}).decode()
    iid = item_id(row.question_id, row.turn, g1, g2)
    domain = row.category or texts.answers.categories.get(row.question_id, "")
    texts.note(iid, row.question_id, row.turn, row.question, (g1, g2, t1, t2), domain)
    out.add(judge=row.judge, protocol=row.protocol, item_id=iid, subset=f"turn {row.turn}",
            document_id=row.question_id, domain=domain, generator_1=g1, generator_2=g2,
            order=("12" if a_first else "21") if row.shown else "", verdict=verdict,
            explanation=row.explanation, invalid_reason=row.invalid_reason,
            request_key=str(row.where), raw_verdict=row.raw, details=details,
            length_1=_length(t1), length_2=_length(t2))  # fmt: skip


def _scores(rows: list[ScoreRow], out: _Columns, texts: _Texts) -> int:
    """Every pair of generators scored on one question: its derived verdict. The unpaired."""
    groups: dict[tuple[str, str, str, int], list[ScoreRow]] = defaultdict(list)
    for row in rows:
        groups[(row.judge, row.protocol, row.question_id, row.turn)].append(row)
    unpaired = 0
    for group in groups.values():
        if len({r.generator for r in group}) < 2:
            unpaired += len(group)
            continue
        for x, y in combinations(sorted(group, key=lambda r: r.generator), 2):
            if x.generator == y.generator:
                continue
            verdict: Verdict
            if x.score is None or y.score is None:
                verdict = "Invalid"
                why = "; ".join(r.invalid_reason for r in (x, y) if r.score is None)
            else:
                verdict = "A" if x.score > y.score else "B" if x.score < y.score else "Tie"
                why = ""
            t1 = texts.response(x.response, x.generator, x.question_id, x.turn)
            t2 = texts.response(y.response, y.generator, y.question_id, y.turn)
            iid = item_id(x.question_id, x.turn, x.generator, y.generator)
            domain = x.category or texts.answers.categories.get(x.question_id, "")
            texts.note(iid, x.question_id, x.turn, x.question, (x.generator, y.generator, t1, t2),
                       domain)  # fmt: skip
            explanation = f"[{x.generator}] {x.explanation}\n\n[{y.generator}] {y.explanation}"
            out.add(judge=x.judge, protocol=x.protocol, item_id=iid, subset=f"turn {x.turn}",
                    document_id=x.question_id, domain=domain, generator_1=x.generator,
                    generator_2=y.generator, order="12", verdict=verdict,
                    explanation=explanation.strip(), invalid_reason=why,
                    request_key=f"{x.where};{y.where}", raw_verdict=f"{x.raw} vs {y.raw}",
                    length_1=_length(t1), length_2=_length(t2), score_1=x.score,
                    score_2=y.score)  # fmt: skip
    return unpaired


def log_table(rows: Iterable[Row], run_id: str, answers: Answers | None = None) -> LogTable:
    """The judgments table of the log rows (``JUDGMENT_SCHEMA``), texts and unpaired scores."""
    out, texts = _Columns(), _Texts(answers)
    scores: list[ScoreRow] = []
    for row in rows:
        if isinstance(row, PairRow):
            _pair(row, out, texts)
        else:
            scores.append(row)
    unpaired = _scores(scores, out, texts)
    frame = pl.DataFrame(out.data, schema={n: JUDGMENT_SCHEMA[n] for n in _Columns.NAMES})
    keys = ["judge", "protocol", "item_id", "order"]
    frame = frame.with_columns(
        run_id=pl.lit(run_id), condition=pl.lit(BLIND), target=pl.lit("none"),
        seed=pl.int_range(pl.len(), dtype=pl.Int64).over(keys), model=pl.col("judge"),
        attempts=pl.lit(1, pl.Int64), reasks=pl.lit(0, pl.Int64),
        escalations=pl.lit(0, pl.Int64), n_requests=pl.lit(1, pl.Int64),
        label_1=pl.lit(""), label_2=pl.lit(""), source_1=pl.lit(""), source_2=pl.lit(""),
        attack=pl.lit(""), degraded=pl.lit(""), gold=pl.lit(""), fingerprint=pl.lit(""),
        template_hash=pl.lit(""),
    )  # fmt: skip
    missing = [pl.lit(None, dtype).alias(n) for n, dtype in JUDGMENT_SCHEMA.items()
               if n not in frame.columns]  # fmt: skip
    frame = frame.with_columns(missing).select(
        pl.col(n).cast(dtype) for n, dtype in JUDGMENT_SCHEMA.items()
    )
    return LogTable(frame, texts.items, unpaired)


_LABEL = {"1": 0, "2": 1}


def label_table(votes: Iterable[VoteRow]) -> pl.DataFrame:
    """The human votes as ``LABEL_SCHEMA`` rows, in candidate terms of each item."""
    data: dict[str, list[object]] = {name: [] for name in LABEL_SCHEMA}
    for v in votes:
        label: str | None = None
        if v.preferred == "tie":
            label = "Tie"
        elif v.preferred is not None:
            won = (v.generator_1, v.generator_2)[_LABEL[v.preferred]]
            label = "A" if won == min(v.generator_1, v.generator_2) else "B"
        data["item_id"].append(item_id(v.question_id, v.turn, v.generator_1, v.generator_2))
        data["label"].append(label)
        data["score"].append(v.score)
        data["weight"].append(v.weight)
        data["annotator"].append(v.annotator)
    return pl.DataFrame(data, schema=LABEL_SCHEMA)
