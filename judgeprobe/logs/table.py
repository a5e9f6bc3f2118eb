"""Log rows into the judgments table, the items' texts and the human labels.

An **item** is one (question, unordered pair of generators, turn) (docs/metrics.md, "Judge
logs"): its candidates are the two generators in name order, so candidate A is the one whose
name sorts first, whatever order a log or a labels file lists them in, and one ``item_id``
serves every judgment of it (both orders) and its labels. A pair verdict's order is ``12``
when candidate A was shown first, ``21`` when B was, and empty when the log does not say
(AlpacaEval). The question is the resampling unit (``document_id``). Scores become the derived
verdicts of every pair of generators scored on the same question and turn by the same judge
and prompt (A when s₁ > s₂, B when s₁ < s₂, Tie when equal; an unreadable score makes the pair's
verdict Invalid), as a pointwise judge's are; no order reached such a judge, so theirs is empty.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import astuple, dataclass
from itertools import combinations

import polars as pl

from judgeprobe.conditions import BLIND
from judgeprobe.core.records import INVALID, JUDGMENT_SCHEMA, LABEL_SCHEMA, Verdict
from judgeprobe.logs.mtbench import Answers
from judgeprobe.logs.rows import ScoreRow, VoteRow, row_schema

ESCAPES = (("%", "%25"), ("/", "%2F"), ("~", "%7E"))
"""What a generator's name has escaped in an item id, the escape character first: with no
``/`` or ``~`` in either name, ``QUESTION/tTURN/A~B`` reads back one way only, and a name
without these characters is written as it is (ids of earlier runs and label files keep
matching)."""


def escape_name(name: str) -> str:
    """A generator's name as an item id holds it (``ESCAPES``)."""
    for plain, escaped in ESCAPES:
        name = name.replace(plain, escaped)
    return name


def item_id(question_id: str, turn: int, generator_a: str, generator_b: str) -> str:
    """The one id of an item: question, turn and the pair in name order, names escaped."""
    first, second = sorted((generator_a, generator_b))
    return f"{question_id}/t{turn}/{escape_name(first)}~{escape_name(second)}"


@dataclass(frozen=True, slots=True)
class LogTable:
    """The judgments table of the logs, each item's texts where known, and the human labels."""

    judgments: pl.LazyFrame  # JUDGMENT_SCHEMA, a plan: written by streaming, never held whole
    texts: pl.LazyFrame  # one row an item whose texts are known: the items file's fields
    unpaired_scores: int  # scores on a question no second generator was scored on


@dataclass(frozen=True, slots=True)
class ItemText:
    """An item whose texts are known, as ``items.parquet`` keeps it (``Item``'s fields)."""

    item_id: str
    document: str
    candidate_1: str
    candidate_2: str
    generator_1: str
    generator_2: str
    document_id: str
    subset: str
    domain: str


TEXTS = row_schema(ItemText)
"""``ItemText``'s fields as ``items.parquet``'s columns."""


def _item_id(question: pl.Expr, turn: pl.Expr, g1: pl.Expr, g2: pl.Expr) -> pl.Expr:
    """``item_id`` as an expression (the pair already in name order)."""

    def escaped(name: pl.Expr) -> pl.Expr:
        for plain, code in ESCAPES:
            name = name.str.replace_all(plain, code, literal=True)
        return name

    return pl.concat_str([question, pl.lit("/t"), turn.cast(pl.String), pl.lit("/"),
                          escaped(g1), pl.lit("~"), escaped(g2)])  # fmt: skip


def _answered(calls: pl.LazyFrame, answers: Answers) -> pl.LazyFrame:
    """Each call's response lengths (the log's texts, else ``--answers``') and its category."""
    found = (
        answers.answer_frame()
        .lazy()
        .select("model", "question_id", "turn", n=pl.col("text").str.len_chars().cast(pl.Int64))
    )
    for side in ("first", "second"):
        calls = calls.join(found.rename({"model": side, "n": f"n_{side}"}),
                           on=[side, "question_id", "turn"], how="left")  # fmt: skip
    listed = answers.question_frame().lazy().select("question_id", "turn", "listed")
    return calls.join(listed, on=["question_id", "turn"], how="left").with_columns(
        n_first=pl.coalesce(pl.col("response_first").str.len_chars().cast(pl.Int64), "n_first"),
        n_second=pl.coalesce(
            pl.col("response_second").str.len_chars().cast(pl.Int64), "n_second"
        ),
        category=pl.when(pl.col("category") != "").then("category")
        .otherwise(pl.col("listed").fill_null("")),
    ).drop("listed")  # fmt: skip


def _details(p_b: pl.Expr) -> pl.Expr:
    """What a call's verdict keeps beside it: a soft preference's P(B), a graded strength."""
    return (
        pl.when(pl.col("p_second").is_not_null()).then(pl.format('{{"P(B)": {}}}', p_b))
        .when(pl.col("strength").is_not_null())
        .then(pl.format('{{"strength": "{}"}}', "strength"))
    )  # fmt: skip


def pair_judgments(calls: pl.LazyFrame, answers: Answers) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Judging calls (``rows.CALLS``) as judgment columns, and the texts of their items.

    The texts are a lazy plan (one row an item, the responses joined from ``--answers`` only
    there), so a log of 10^6 calls never holds a copy of both answers per call.
    """
    c = _answered(calls, answers)
    a_first = pl.col("first") <= pl.col("second")

    def by_candidate(first: str, second: str) -> tuple[pl.Expr, pl.Expr]:
        return (pl.when(a_first).then(first).otherwise(second),
                pl.when(a_first).then(second).otherwise(first))  # fmt: skip

    g1, g2 = by_candidate("first", "second")
    won = pl.col("winner")
    p_b = pl.when(a_first).then("p_second").otherwise(1 - pl.col("p_second"))
    r1, r2 = by_candidate("response_first", "response_second")
    n1, n2 = by_candidate("n_first", "n_second")
    judged = c.select(
        "judge", "protocol", "explanation", "invalid_reason",
        item_id=_item_id(pl.col("question_id"), pl.col("turn"), g1, g2),
        subset=pl.concat_str([pl.lit("turn "), pl.col("turn").cast(pl.String)]),
        document_id="question_id", domain="category", generator_1=g1, generator_2=g2,
        order=pl.when(~pl.col("shown")).then(pl.lit("")).when(a_first).then(pl.lit("12"))
        .otherwise(pl.lit("21")),
        verdict=pl.when(won.is_null()).then(pl.lit(INVALID))
        .when(won == "tie").then(pl.lit("Tie"))
        .when((won == "first") == a_first).then(pl.lit("A")).otherwise(pl.lit("B")),
        request_key=pl.concat_str([pl.col("file"), pl.lit(":"), pl.col("line").cast(pl.String)]),
        raw_verdict="raw",
        details=_details(p_b),
        length_1=n1, length_2=n2,
        score_1=pl.lit(None, pl.Float64), score_2=pl.lit(None, pl.Float64),
    )  # fmt: skip
    items = c.select(
        item_id=_item_id(pl.col("question_id"), pl.col("turn"), g1, g2), generator_1=g1,
        generator_2=g2, question_id="question_id", turn="turn", domain="category",
        question="question", r1=r1, r2=r2,
    ).unique("item_id", keep="first")  # fmt: skip
    return judged, _item_texts(items, answers)


def _item_texts(items: pl.LazyFrame, answers: Answers) -> pl.LazyFrame:
    """Each item's texts (``TEXTS``): the log's, else --answers'; items lacking one left out."""
    found = answers.answer_frame().lazy()
    for k, side in ((1, "generator_1"), (2, "generator_2")):
        items = items.join(found.rename({"model": side, "text": f"a{k}"}),
                           on=[side, "question_id", "turn"], how="left")  # fmt: skip
    asked = answers.question_frame().lazy().select("question_id", "turn", "asked")
    items = items.join(asked, on=["question_id", "turn"], how="left")
    t1, t2 = pl.coalesce("r1", "a1"), pl.coalesce("r2", "a2")
    question = pl.coalesce("question", "asked")
    return items.filter(
        t1.str.strip_chars().str.len_chars().fill_null(0) > 0,
        t2.str.strip_chars().str.len_chars().fill_null(0) > 0,
    ).select(
        "item_id",
        document=pl.coalesce(
            pl.when(question.str.strip_chars() != "").then(question),
            pl.format("(question {}, turn {}: its text is not in the log)", "question_id",
                      "turn"),
        ),
        candidate_1=t1, candidate_2=t2, generator_1="generator_1", generator_2="generator_2",
        document_id="question_id",
        subset=pl.concat_str([pl.lit("turn "), pl.col("turn").cast(pl.String)]),
        domain="domain",
    )  # fmt: skip


class _Columns:
    """Derived judgments' columns as lists, appended a judgment at a time."""

    NAMES = ("judge", "protocol", "item_id", "subset", "document_id", "domain", "generator_1",
             "generator_2", "order", "verdict", "explanation", "invalid_reason", "request_key",
             "raw_verdict", "details", "length_1", "length_2", "score_1", "score_2")  # fmt: skip

    def __init__(self) -> None:
        self.data: dict[str, list[object]] = {name: [] for name in self.NAMES}
        self.texts: list[ItemText] = []

    def add(self, **values: object) -> None:
        for name in self.NAMES:
            self.data[name].append(values.get(name))

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.data, schema={n: JUDGMENT_SCHEMA[n] for n in self.NAMES})


def _length(text: str | None) -> int | None:
    return None if text is None else len(text)


def _scores(rows: list[ScoreRow], answers: Answers) -> tuple[_Columns, int]:
    """Every pair of generators scored on one question: its derived verdict. The unpaired."""
    out = _Columns()
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
                verdict = INVALID
                why = "; ".join(r.invalid_reason for r in (x, y) if r.score is None)
            else:
                verdict = "A" if x.score > y.score else "B" if x.score < y.score else "Tie"
                why = ""
            t1 = (
                x.response
                if x.response is not None
                else answers.answer(x.generator, x.question_id, x.turn)
            )
            t2 = (
                y.response
                if y.response is not None
                else answers.answer(y.generator, y.question_id, y.turn)
            )
            iid = item_id(x.question_id, x.turn, x.generator, y.generator)
            domain = x.category or answers.categories.get(x.question_id, "")
            question = (
                x.question if x.question is not None else answers.question(x.question_id, x.turn)
            )
            if t1 and t2 and t1.strip() and t2.strip():
                out.texts.append(ItemText(
                    item_id=iid, document=question or f"(question {x.question_id}, turn "
                    f"{x.turn}: its text is not in the log)", candidate_1=t1,
                    candidate_2=t2, generator_1=x.generator, generator_2=y.generator,
                    document_id=x.question_id, subset=f"turn {x.turn}", domain=domain,
                ))  # fmt: skip
            explanation = f"[{x.generator}] {x.explanation}\n\n[{y.generator}] {y.explanation}"
            out.add(judge=x.judge, protocol=x.protocol, item_id=iid, subset=f"turn {x.turn}",
                    document_id=x.question_id, domain=domain, generator_1=x.generator,
                    generator_2=y.generator, order="", verdict=verdict,
                    explanation=explanation.strip(), invalid_reason=why,
                    request_key=f"{x.where};{y.where}", raw_verdict=f"{x.raw} vs {y.raw}",
                    length_1=_length(t1), length_2=_length(t2), score_1=x.score,
                    score_2=y.score)  # fmt: skip
    return out, unpaired


def log_table(
    calls: pl.LazyFrame, scores: list[ScoreRow], run_id: str, answers: Answers | None = None
) -> LogTable:
    """The judgments table (``JUDGMENT_SCHEMA``) of judging calls and scores, and the texts."""
    answers = answers or Answers()
    pairs, texts = pair_judgments(calls, answers)
    derived, unpaired = _scores(scores, answers)
    frame = pl.concat(
        [pairs.select(_Columns.NAMES), derived.frame().lazy()], how="vertical_relaxed"
    )
    texts = pl.concat(
        [texts, pl.LazyFrame([astuple(t) for t in derived.texts], schema=TEXTS, orient="row")]
    ).unique("item_id", keep="first")
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
    present = frame.collect_schema().names()
    missing = [pl.lit(None, dtype).alias(n) for n, dtype in JUDGMENT_SCHEMA.items()
               if n not in present]  # fmt: skip
    judged = frame.with_columns(missing).select(
        pl.col(n).cast(dtype) for n, dtype in JUDGMENT_SCHEMA.items()
    )
    return LogTable(judged, texts, unpaired)


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
