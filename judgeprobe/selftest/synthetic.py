"""Synthetic items for the self-test.

One document per item, two summaries of nearly equal length with different openings, provenance
alternating between the candidates.

Equal lengths keep the planted verbosity preference out of Blind; one item per document
makes every item an independent draw. Deterministic for a given count and seed.
"""

from __future__ import annotations

import random
from pathlib import Path

import orjson

from judgeprobe.selftest.simulator import draw, opening

PLACES = ["Alder", "Brisk", "Carrow", "Dunmere", "Elston", "Fenwick", "Garth", "Holloway"]
BODIES = ["council", "school board", "water authority", "library trust", "port commission"]
PLANS = ["a new footbridge", "longer opening hours", "a solar roof", "a bus route",
         "a tree-planting scheme", "a flood barrier", "free evening classes"]  # fmt: skip
OUTCOMES = ["approved", "postponed", "rejected", "approved with changes"]


def _facts(rng: random.Random) -> tuple[str, str, str, str, int, int]:
    """One meeting's place, body, plan, outcome, cost and votes, drawn in a fixed order."""
    place, body = rng.choice(PLACES), rng.choice(BODIES)
    plan, outcome = rng.choice(PLANS), rng.choice(OUTCOMES)
    return place, body, plan, outcome, rng.randint(2, 90) * 10_000, rng.randint(5, 12)


def synthetic_document(rng: random.Random, i: int) -> tuple[str, str, str]:
    """Synthetic document ``i`` and two faithful summaries of it, drawn from ``rng``."""
    place, body, plan, outcome, cost, votes = _facts(rng)
    doc = (
        f"Report {i}. The {body} of {place} met on day {i % 28 + 1} to discuss {plan}. "
        f"The proposal would cost about {cost} pounds over three years. "
        f"After a long debate the members {outcome} it, with {votes} votes in favour. "
        f"Residents had written {rng.randint(10, 400)} letters about the plan. "
        f"The next meeting will review the budget and the schedule."
    )
    one = (
        f"The {body} of {place} {outcome} {plan}, which would cost about {cost} pounds, "
        f"after {votes} members voted in favour at a long meeting."
    )
    two = (
        f"At a long meeting in {place}, {votes} members of the {body} voted in favour and "
        f"{plan} costing about {cost} pounds was {outcome}."
    )
    return doc, one, two


def synthetic_question(rng: random.Random, i: int) -> tuple[str, str, str]:
    """Synthetic question ``i`` and two correct answers to it, drawn from ``rng``.

    The question pairs of ``--own`` (an MT-Bench-style judge of question/answer pairs): the
    question carries its facts, the answers state them in other openings, at nearly equal length.
    """
    place, body, plan, outcome, cost, votes = _facts(rng)
    question = (
        f"Question {i}. The {body} of {place} met to discuss {plan}, which would cost about "
        f"{cost} pounds; the members {outcome} it, with {votes} votes in favour. "
        f"What did the {body} decide, and how many members voted in favour?"
    )
    one = (
        f"The {body} of {place} {outcome} {plan}, costing about {cost} pounds, "
        f"with {votes} members voting in favour."
    )
    two = (
        f"With {votes} votes in favour, {plan} costing about {cost} pounds was "
        f"{outcome} by the {body} of {place}."
    )
    return question, one, two


def gold_of(question: str, one: str, two: str) -> int:
    """The answer the simulated judge's evidence step prefers (1 or 2): the pair's gold.

    The ``--own`` design plants a judge that reads the gold answer: its only departures from
    gold are its planted biases (ties, position, cues), so the self-test recovers ACC exactly.
    """
    return 1 if draw(question, opening(one), "merit") < draw(question, opening(two), "merit") else 2


def write_items(
    path: Path, n: int, seed: int = 0, *, questions: bool = False, reference: bool = False
) -> Path:
    """Write ``n`` items as JSONL and return the path.

    ``questions``: question/answer pairs with gold (``preferred``, ``gold_of``); ``reference``:
    each with the gold answer as its ``reference`` field too (a judge's own placeholder shows it).
    """
    rng = random.Random(seed)
    make = synthetic_question if questions else synthetic_document
    rows = []
    for i in range(n):
        doc, one, two = make(rng, i)
        llm_first = i % 2 == 0
        rows.append(
            {
                "item_id": f"selftest-{i:04d}",
                "subset": "selftest",
                "document_id": f"doc-{i:04d}",
                "document": doc,
                "candidate_1": one,
                "candidate_2": two,
                "source_1": "LLM" if llm_first else "TradML",
                "source_2": "TradML" if llm_first else "LLM",
                **({"preferred": gold_of(doc, one, two)} if questions else {}),
            }
        )
        if reference:
            rows[-1]["reference"] = one if rows[-1]["preferred"] == 1 else two
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path
