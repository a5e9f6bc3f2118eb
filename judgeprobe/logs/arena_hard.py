"""Arena-Hard-Auto judgments (``data/BENCH/model_judgment/JUDGE/MODEL.jsonl``).

One line per question: ``question_id`` (or ``uid``), ``model``, ``judge`` and ``games``, two
judging calls against one baseline model, as arena-hard-auto's ``gen_judgment.py`` plays them:
game 1 shows the baseline's answer as A and the model's as B, game 2 the model's as A and the
baseline's as B (its ``show_result.py`` reads them so). Each game's ``score`` is the label the
judge gave, ``A>>B``, ``A>B``, ``A=B``, ``B>A`` or ``B>>A`` (``>>`` a strong win, kept as the
verdict's ``strength``); null (no label in the judge's reply) or any other label is an Invalid
judgment with its reason. Each game's ``user_prompt`` holds the question and both answers
between arena-hard-auto's markers, so the texts need no answers folder.

The baseline is not on a v0.1 line: it is ``baseline_model`` in arena-hard-auto's
``judge_config.yaml``, read from the judgments' folder or one above it (``config/`` of the
checkout), unless ``--baseline-model`` names it; a line that names its ``baseline`` (later
versions) is read as it says.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import yaml

from judgeprobe import JudgeprobeError
from judgeprobe.logs.formats import LogFormat, ReadOptions, Sniff, record_rows, register_format
from judgeprobe.logs.rows import BadRow, PairRow, Row, Skipped, Strength, Where, Winner
from judgeprobe.logs.source import Record, need, records, text
from judgeprobe.prompts.task import Task

KEYS = {"model", "judge", "games"}
CONFIG = "judge_config.yaml"
LABELS: dict[str, tuple[Winner, Strength | None]] = {
    "A>>B": ("first", "strong"), "A>B": ("first", "slight"), "A=B": ("tie", None),
    "B>A": ("second", "slight"), "B>>A": ("second", "strong"),
}  # fmt: skip
"""A game's label in screen terms (A is shown first) and its strength."""
PROTOCOL = "arena-hard"
_TEXT = (
    r"(?s)<\|The Start of Assistant {x}'s Answer\|>\n(.*?)\n<\|The End of Assistant {x}'s Answer\|>"
)
_QUESTION = r"(?s)<\|User Prompt\|>\n(.*?)\n\n<\|The Start of Assistant A's Answer\|>"


def _is_arena_hard(sniff: Sniff) -> bool:
    keys = sniff.keys
    return keys >= KEYS and bool(keys & {"question_id", "uid"})


@cache
def config_baseline(folder: Path) -> tuple[str | None, Path | None]:
    """``baseline_model`` of the nearest ``judge_config.yaml`` at or above ``folder``."""
    for place in (folder, *folder.parents[:4]):
        for path in (place / CONFIG, place / "config" / CONFIG):
            if path.is_file():
                return _baseline_of(path), path
    return None, None


def _baseline_of(path: Path) -> str | None:
    try:
        config = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise JudgeprobeError(f"{path}: not a readable judge_config.yaml ({exc})") from None
    if not isinstance(config, dict):
        raise JudgeprobeError(f"{path}: not a judge_config.yaml (no settings in it)")
    if config.get("baseline") is False:
        return None
    model = config.get("baseline_model")
    return str(model) if model else None


def _find(pattern: str, prompt: object) -> str | None:
    found = re.search(pattern, prompt) if isinstance(prompt, str) else None
    return found.group(1) if found else None


def _label(value: object) -> tuple[Winner | None, Strength | None, str]:
    if value is None:
        return None, None, "the judge's reply held no verdict label (null)"
    if not isinstance(value, str) or value.strip() not in LABELS:
        return None, None, f"label {value!r} is not one of {', '.join(LABELS)}"
    won, strength = LABELS[value.strip()]
    return won, strength, ""


def game_rows(where: Where, record: Record, baseline: str | None) -> Iterator[PairRow]:
    """One line's games: game 1 with the baseline shown first, game 2 with the model first."""
    model = str(need(record, "model"))
    baseline = str(record.get("baseline") or baseline or "")
    if not baseline:
        raise JudgeprobeError(
            f"{where}: no baseline model: put arena-hard-auto's {CONFIG} beside the judgments "
            "or name it with --baseline-model"
        )
    if model == baseline:
        raise BadRow(f"model {model!r} is the baseline itself")
    games = need(record, "games")
    if not isinstance(games, list) or not 1 <= len(games) <= 2:
        raise BadRow("games is not a list of one or two games")
    qid = str(record.get("question_id") or need(record, "uid"))
    for number, game in enumerate(games):
        if not isinstance(game, dict):
            raise BadRow(f"game {number + 1} is not an object")
        first, second = (baseline, model) if number == 0 else (model, baseline)
        won, strength, why = _label(game.get("score"))
        prompt = game.get("user_prompt")
        yield PairRow(
            where=where, judge=str(need(record, "judge")), protocol=PROTOCOL, question_id=qid,
            turn=1, first=first, second=second, winner=won, raw=str(game.get("score")),
            explanation=text(game.get("judgment")) or "", invalid_reason=why,
            question=_find(_QUESTION, prompt), response_first=_find(_TEXT.format(x="A"), prompt),
            response_second=_find(_TEXT.format(x="B"), prompt), strength=strength,
        )  # fmt: skip


def _rows(path: Path, options: ReadOptions) -> Iterator[Row | Skipped]:
    baseline = options.baseline_model or config_baseline(path.resolve().parent)[0]
    return record_rows(records(path), lambda where, r: game_rows(where, r, baseline))


register_format(LogFormat(
    "arena-hard", _is_arena_hard, _rows,
    help="arena-hard-auto data/BENCH/model_judgment/JUDGE/MODEL.jsonl", task=Task(preset="qa"),
))  # fmt: skip
