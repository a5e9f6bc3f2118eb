"""The sensitivity controls' rules: each copy is worse in exactly one fact of its kind, the
check catches a copy that is not, and a sensitivity condition puts the copy on a side drawn
per item and leaves out items with nothing to degrade."""

from __future__ import annotations

import pytest

from judgeprobe.conditions import DegradeCondition, builtin_conditions, parse_conditions
from judgeprobe.core.corpus import load_items
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig
from judgeprobe.cue.stream import count, cue_jobs, protocols_for
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.text.degrade import KINDS, Kind, degrade, key_sentence, sentences, verify

DOC = (
    "The council of Alder met with the Brisk water authority on Monday. It approved a budget "
    "of 20,000 pounds over 3 years for the new bridge, and 12 members voted in favour. Work "
    "will start at Fenwick in May."
)
TEXT = (
    "Alder's council approved 20,000 pounds for a bridge. The vote was 12 in favour, and "
    "work will start at Fenwick."
)


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_changes_one_fact_and_passes_its_check(kind: Kind) -> None:
    d = degrade(kind, DOC, TEXT, "item-1")
    assert d is not None
    assert d.degraded != TEXT
    assert verify(d.kind, DOC, TEXT, d.degraded) == ""
    assert degrade(kind, DOC, TEXT, "item-1") == d  # deterministic


def test_the_facts_that_change() -> None:
    number = degrade("number", DOC, TEXT, "k")
    assert number is not None
    assert (number.before, number.after) in {("20,000", "40,000"), ("12", "24")}
    entity = degrade("entity", DOC, TEXT, "k")
    assert entity is not None
    assert entity.before == "Fenwick"  # the summary's one standalone name (Alder's opens it)
    assert entity.after in {"Alder", "Brisk"}  # the document's other names (no weekday, month)
    negation = degrade("negation", DOC, TEXT, "k")
    assert negation is not None
    assert " not " in negation.degraded
    assert negation.degraded.replace(" not", "", 1) == TEXT
    drop = degrade("drop", DOC, TEXT, "k")
    assert drop is not None
    assert drop.degraded == sentences(TEXT)[1 - key_sentence(DOC, sentences(TEXT))]


@pytest.mark.parametrize(
    ("kind", "copy", "problem"),
    [
        ("number", TEXT.replace("12", "24").replace("Fenwick", "Alder"), "more than one word"),
        ("number", TEXT.replace("12", "3"), "document states"),
        ("number", TEXT.replace("bridge", "tunnel"), "not a number"),
        ("entity", TEXT.replace("Fenwick", "Paris"), "not a name swapped"),
        ("negation", TEXT.replace("was", "was never"), "not a 'not'"),
        ("drop", "Something else.", "one sentence left out"),
        ("number", TEXT, "not at all"),
    ],
)
def test_the_check_catches_a_copy_that_is_not_one_fact(kind: str, copy: str, problem: str) -> None:
    assert problem in verify(kind, DOC, TEXT, copy)  # type: ignore[arg-type]


def test_rules_that_would_read_wrong_are_not_applied() -> None:
    assert degrade("negation", DOC, "It had about 40 members and is the largest.", "k") is None
    year = degrade("number", DOC, "It opened in 1962.", "k")
    assert year is not None
    assert year.after in {"1969", "1955"}  # a year moves by years
    names = degrade("entity", "Dr Pia Holm met Ines in May.", "Dr Holm spoke in May.", "k")
    assert names is not None
    assert (names.before, names.after) in {("Holm", "Pia"), ("Holm", "Ines")}  # not Dr, not May


def test_nothing_to_degrade_is_none() -> None:
    plain = "a short summary without any of it"
    assert all(degrade(k, DOC, plain, "k") is None for k in KINDS)


def test_every_copy_of_the_bundled_candidate_set_passes_its_check() -> None:
    conditions = builtin_conditions()
    judged = dict.fromkeys(KINDS, 0)
    for item in load_items("bundled:candidates"):
        for name in ("DegradedNumber", "DegradedEntity", "DegradedNegation", "DegradedSentence"):
            condition = conditions[name]
            assert isinstance(condition, DegradeCondition)
            found, problem = condition.degradation(item)
            assert problem == "" or found is None, (item.item_id, name, problem)
            judged[condition.degrade] += found is not None
    assert min(judged.values()) > 100, judged


ITEM = Item(item_id="i", document=DOC, candidate_1=TEXT, candidate_2="Another summary.")


def test_a_sensitivity_condition_shows_the_copy_on_a_side_drawn_per_item() -> None:
    condition = builtin_conditions()["DegradedNumber"]
    sides = set()
    for i in range(40):
        cue = condition.resolve(ITEM.model_copy(update={"item_id": f"i{i}"}))
        assert cue.skip == ""
        assert (cue.label_1, cue.label_2, cue.target) == ("", "", "none")
        copy, intact = (cue.text_1, cue.text_2) if cue.degraded == "A" else (cue.text_2, cue.text_1)
        assert intact == TEXT
        assert verify("number", DOC, intact, copy) == ""
        sides.add(cue.degraded)
    assert sides == {"A", "B"}
    none = ITEM.model_copy(update={"candidate_1": "no digits", "candidate_2": "none here"})
    assert "no number" in condition.resolve(none).skip


def test_a_degrade_condition_shows_no_cue() -> None:
    with pytest.raises(Exception, match="shows no cue"):
        parse_conditions({"X": {"degrade": "number", "label_1": "LLM"}}, "test")
    with pytest.raises(Exception, match="degrade"):
        parse_conditions({"X": {"degrade": "sarcasm"}}, "test")


def test_the_plan_leaves_out_items_with_nothing_to_degrade() -> None:
    items = [ITEM, ITEM.model_copy(update={"item_id": "j", "candidate_1": "no digits here",
                                           "candidate_2": "nor here"})]  # fmt: skip
    cfg = SweepConfig(
        items="x.jsonl", conditions=["Blind", "DegradedNumber"], order="both",
        judges=[JudgeConfig(name="j", url="http://127.0.0.1:9/v1")],
    )  # fmt: skip
    jobs = list(cue_jobs(cfg, protocols_for(cfg), items, builtin_conditions(), {"j": "f"}))
    assert (
        len(jobs)
        == count(cfg, protocols_for(cfg), items, builtin_conditions()).judgments
        == 2 * 2 + 2
    )
    degraded = [j for j in jobs if j.condition == "DegradedNumber"]
    assert {j.item_id for j in degraded} == {"i"}
    assert {j.degraded for j in degraded} <= {"A", "B"}
