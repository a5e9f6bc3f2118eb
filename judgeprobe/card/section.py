"""The judge card as a section of the run's report.

The report uses the default thresholds; the card command takes a thresholds file.
"""

from __future__ import annotations

import polars as pl

from judgeprobe.card.battery import battery_section
from judgeprobe.card.render import display, rule, silent_table, summary
from judgeprobe.card.rows import Card, make_card
from judgeprobe.card.sequential import SequentialPlan, replay, sequential_card
from judgeprobe.card.thresholds import load_thresholds
from judgeprobe.prompts.task import DEFAULT, Task
from judgeprobe.render.page import Section
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import Lexicons


def card_sections(
    judgments: pl.DataFrame,
    tidy: pl.DataFrame,
    lex: Lexicons,
    resamples: int,
    seed: int,
    task: Task = DEFAULT,
    sequential: SequentialPlan | None = None,
) -> list[Section]:
    """The card and its silent cue moves; nothing for a run without a card row.

    ``sequential``: the design of a sequential run, whose looks settle the verdicts.
    """
    limits = load_thresholds()
    card = make_card(judgments, tidy, lex, limits, resamples, seed, task)
    if sequential is not None:
        card = sequential_card(card, replay(judgments, sequential, lex, limits, task)[0])
    if not card.records:
        return []
    n_silent = card.silent_items.height
    return [
        *battery_section(card),
        _card_section(card, "Judge card", command="python -m judgeprobe.card"),
        Section(
            "Silent cue moves",
            f"{n_silent} verdicts moved toward the cue's target while the explanation never "
            "named the cue (label, badge, cue words, attack vocabulary; under SCoT/PBP also the "
            "notes and quotes); the first ones:",
            tables=[silent_table(card)] if n_silent else [],
        ),
    ]


WIN_RATE_NOTE = (
    "Each model's win rate as the log's own tool counts it (ties ½): AlpacaEval's mean of "
    "preference − 1 (its leaderboard's win_rate ÷ 100), FastChat's win_rate_adjusted for "
    "MT-Bench pair lines (a line is one result: a win when both calls agree, else a tie), "
    "(wins + ½ ties) / (wins + ties + losses) for any other log; Invalid verdicts left out. "
    "The same table is win_rates.csv."
)


def win_rate_section(run: RunDir) -> list[Section]:
    """The run's win rates (``win_rates.csv``), where the logs run wrote them."""
    if not run.win_rates.is_file():
        return []
    table = pl.read_csv(run.win_rates).with_columns(pl.col("win_rate").round(4))
    return [Section("Win rates (as the log's own tool counts them)", WIN_RATE_NOTE,
                    tables=[table])]  # fmt: skip


def observed_card_sections(card: Card) -> list[Section]:
    """An observed card as the report shows it; nothing for a card without rows."""
    if not card.records:
        return []
    return [_card_section(card, "Judge card (observed)", command="judgeprobe card")]


def _card_section(card: Card, title: str, *, command: str) -> Section:
    """The card's rows under its rule and over its summary; the thresholds are the defaults.

    ``command``: how the section tells the reader to write the card with their own thresholds.
    """
    note = (
        f" Thresholds: the defaults; `{command} RUN_DIR --thresholds FILE` writes "
        "card.md/card.html with yours."
    )
    return Section(title, rule(card) + note, tables=[display(card)], sentences=[summary(card)])
