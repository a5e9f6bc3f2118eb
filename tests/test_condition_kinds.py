"""Conditions by kind: a TOML table reads into the kind its keys name, one kind per condition."""

from __future__ import annotations

import polars as pl
import pytest
from pydantic import TypeAdapter

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import (
    BLIND,
    KINDS,
    PLACEBO,
    REASK,
    AttackCondition,
    Condition,
    DegradeCondition,
    FormatCondition,
    InjectCondition,
    LabelCondition,
    PressureCondition,
    RevealCondition,
    builtin_conditions,
    parse_conditions,
)
from judgeprobe.core.records import Item
from judgeprobe.metrics.units import with_optional
from judgeprobe.report.browser import _cue

ITEM = Item(item_id="i", document="Doc.", candidate_1="One.", candidate_2="Two.",
            source_1="LLM", source_2="TradML")  # fmt: skip


def test_every_bundled_condition_reads_as_the_kind_its_keys_name() -> None:
    conditions = builtin_conditions()
    expected = {
        "Blind": LabelCondition, "True": LabelCondition, "RevealAfter": RevealCondition,
        "Verbosity": AttackCondition, "Injected": InjectCondition,
        "DegradedNumber": DegradeCondition, "Challenge": PressureCondition,
        "FormatBullets": FormatCondition,
    }  # fmt: skip
    for name, kind in expected.items():
        assert type(conditions[name]) is kind, name
    assert {c.kind for c in conditions.values()} == set(KINDS)
    for name in (BLIND, PLACEBO, REASK):  # the special names are the bundled files' tables
        assert name in conditions


def test_a_dumped_condition_reads_back_through_the_tagged_union() -> None:
    adapter = TypeAdapter[Condition](Condition)
    for condition in builtin_conditions().values():
        again = adapter.validate_python(condition.model_dump())
        assert again == condition
        assert again.resolve(ITEM) == condition.resolve(ITEM)


def test_a_written_kind_is_checked_and_old_tables_still_read() -> None:
    written = parse_conditions({"X": {"kind": "attack", "attack": "verbosity", "target": "A"}}, "t")
    assert isinstance(written["X"], AttackCondition)
    # keys another kind had, at the value that meant nothing then, are read as unset
    old = parse_conditions({"D": {"degrade": "number", "target": "none", "label_1": "",
                                  "attack_on": "A", "reformat_on": "A"}}, "t")  # fmt: skip
    assert isinstance(old["D"], DegradeCondition)
    with pytest.raises(JudgeprobeError, match=r"^t: condition X: kind must be one of label"):
        parse_conditions({"X": {"kind": "sarcasm"}}, "t")
    with pytest.raises(JudgeprobeError, match="attack_on"):
        parse_conditions({"X": {"label_1": "a", "attack_on": "B"}}, "t")


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"attack": "verbosity", "inject": {"where": "A", "what": "x"}}, "not attack and inject"),
        ({"attack": "verbosity", "reveal_1": "x"}, "not attack and reveal"),
        ({"degrade": "number", "pressure": "challenge"}, "not both"),
        ({"pressure": "reask", "label_2": "x"}, "shows no cue"),
    ],
)
def test_a_condition_is_of_one_kind(table: dict[str, object], message: str) -> None:
    with pytest.raises(JudgeprobeError, match=message):
        parse_conditions({"X": table}, "t")


def test_an_attack_and_a_format_say_their_side_in_their_own_fields() -> None:
    conditions = parse_conditions({
        "OnB": {"attack": "confidence", "attack_on": "B", "target": "B"},
        "FormB": {"reformat": "bullets", "reformat_on": "B", "target": "B"},
    }, "t")  # fmt: skip
    attack, form = conditions["OnB"].resolve(ITEM), conditions["FormB"].resolve(ITEM)
    assert (attack.attack, attack.attack_on, attack.reformat) == ("confidence", "B", "")
    assert attack.text_1 == "One."
    assert attack.text_2 != "Two."
    assert (form.attack, form.reformat, form.reformat_on) == ("", "bullets", "B")
    # the evidence browser names the side the attack rewrote (candidate 2, not always 1)
    row = {"label_1": "", "label_2": "", "target": "B"}
    assert _cue(row | {"attack": "confidence", "attack_on": "B"}) == [
        "confidence attack on 2",
        "favours B",
    ]
    assert _cue(row | {"reformat": "bullets", "reformat_on": "both"})[0] == "form: bullets on both"


def test_an_older_table_has_its_format_moved_out_of_the_attack_column() -> None:
    old = pl.DataFrame({
        "condition": ["FormatBullets", "Verbosity", "Blind"], "subset": ["s"] * 3,
        "item_id": ["a", "b", "c"], "attack": ["format:bullets", "verbosity", ""],
    })  # fmt: skip
    read = with_optional(old.lazy()).collect()
    assert read["attack"].to_list() == ["", "verbosity", ""]
    assert read["reformat"].to_list() == ["bullets", "", ""]
