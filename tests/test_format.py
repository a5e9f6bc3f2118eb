"""Format conditions: each rule keeps the words in order on hostile texts, the check catches a
broken rule, the conditions resolve as attacks on one candidate, and a sweep records the checks."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.conditions import builtin_conditions, family_members, parse_conditions, placebo_of
from judgeprobe.conditions import checks as checks_module
from judgeprobe.conditions.checks import attack_checks
from judgeprobe.core.records import Item
from judgeprobe.cue.run import main
from judgeprobe.selftest.__main__ import main as selftest_main
from judgeprobe.text import format as fmt
from judgeprobe.text.format import FORMS, plain, reformat, same_words, words
from tests.conftest import make_items, write_config
from tests.fakeserver import FakeJudge

PROSE = (
    "The council approved the budget on Monday. It raises the levy by 3%, the mayor said. "
    "Critics objected strongly! Will it pass the second vote?"
)
HOSTILE = [
    "",
    "   ",
    "word",
    "Word.",
    "- already a bullet.\n- and another one.",
    "1. first point\n2) second point",
    "Über straße naïve café résumé. 東京は大きい都市です。 Ünïcödé ends here!",
    "Some **bold** text and *italic* words with snake_case_names inside.",
    "Line one.\n\n\tIndented line two.   Spaced   out.",
    "No final stop and (brackets), \"quotes\" — dashes – and don't forget it's fine",
    ("A long sentence with many words in it and no end " * 400).strip() + ".",
]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_every_rule_keeps_the_words_in_order(form: fmt.Form, text: str) -> None:
    out = reformat(form, text, "item-1:1")
    assert same_words(text, out) == ""
    assert words(out) == words(text)
    assert reformat(form, text, "item-1:1") == out  # deterministic


@pytest.mark.parametrize("form", FORMS)
def test_every_rule_changes_the_form_of_prose(form: fmt.Form) -> None:
    out = reformat(form, PROSE, "k")
    assert out != PROSE
    assert fmt.formatted(out)
    assert not fmt.formatted(PROSE)
    assert plain(out) == PROSE  # a reader can still recognise the summary


def test_the_rules_do_what_they_say() -> None:
    spaced = fmt.spacing(PROSE, "k")
    assert "\n\n" in spaced
    assert spaced.startswith(("  ", "    "))
    assert len(spaced.splitlines()) == 5  # four sentences, one blank line after the second
    assert fmt.bullets(PROSE, "k").splitlines() == [
        "- The council approved the budget on Monday.",
        "- It raises the levy by 3%, the mayor said.",
        "- Critics objected strongly!",
        "- Will it pass the second vote?",
    ]
    bold = fmt.emphasis(PROSE, "k")
    assert bold.count("**") >= 2
    assert bold.count("**") % 2 == 0
    assert "**3%**" not in bold
    assert "**by**" not in bold


def test_seeded_rules_draw_per_key() -> None:
    keys = [f"item-{i}:1" for i in range(20)]
    assert len({fmt.emphasis(PROSE, k) for k in keys}) > 1
    assert len({fmt.spacing(PROSE, k) for k in keys}) > 1


def test_bulleted_text_stays_as_it_is() -> None:
    for text in ("- one.\n- two.", "* one\n* two", "• one\n• two", "1. one\n2. two"):
        assert fmt.bullets(text, "k") == text


def test_emphasis_never_nests_inside_existing_bold() -> None:
    text = "Keep **these several words** bold and mark others elsewhere please."
    for i in range(30):
        out = fmt.emphasis(text, f"k{i}")
        assert "**these several words**" in out
        assert same_words(text, out) == ""


def test_the_check_fails_a_broken_rule(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert same_words("a b c", "a c b") == "word 2 changed: 'b' → 'c'"
    assert same_words("a b c", "a b") == "1 word(s) lost at the end, from 'c'"
    assert same_words("a b", "a b c") == "1 word(s) added at the end, from 'c'"
    assert same_words("Café", "Cafe") != ""  # no Unicode folding: the words must be the same

    def broken(text: str, key: str) -> str:
        return "- " + " ".join(text.split()[1:])  # drops the first word

    monkeypatch.setitem(fmt.RULES, "bullets", broken)
    item = Item(item_id="d1", document="Doc.", candidate_1=PROSE, candidate_2="Other text.")
    table = attack_checks([item], builtin_conditions(), ["Blind", "FormatBullets", "FormatSpacing"])
    rows = {r["condition"]: r for r in table.iter_rows(named=True)}
    assert rows["FormatBullets"]["preserved"] is False
    assert rows["FormatBullets"]["attack"] == ""  # a format is no attack: its method says it
    assert rows["FormatBullets"]["flag"] == "word 1 changed: 'The' → 'council'"
    assert rows["FormatSpacing"]["preserved"] is True
    assert rows["FormatSpacing"]["flag"] == ""
    both = attack_checks([item], builtin_conditions(), ["FormatBulletsBoth"]).row(0, named=True)
    assert both["preserved"] is False
    assert both["flag"].startswith("candidate 1: word 1 changed")
    assert "candidate 2:" in both["flag"]
    assert checks_module.SCHEMA["method"] == pl.String
    line = checks_module.write_attack_checks(tmp_path / "c.csv", [item], builtin_conditions(),
                                             ["FormatBullets", "FormatSpacing"])  # fmt: skip
    assert line.startswith("attack preservation: 1 of 2 attacked texts pass (failed: ")
    assert "FormatBullets d1: word 1 changed: 'The' → 'council'" in line


def test_format_conditions_resolve_as_attacks_on_one_candidate() -> None:
    conditions = builtin_conditions()
    item = Item(item_id="d7", document="Doc.", candidate_1=PROSE, candidate_2="Other. Text here.")
    assert family_members("format") == [
        "FormatSpacing", "FormatSpacingBoth", "FormatBullets", "FormatBulletsBoth",
        "FormatEmphasis", "FormatEmphasisBoth",
    ]  # fmt: skip
    for form in FORMS:
        name = f"Format{form.capitalize()}"
        cue, placebo = conditions[name].resolve(item), conditions[f"{name}Both"].resolve(item)
        assert placebo_of(name) == f"{name}Both"
        assert (cue.target, cue.attack, cue.label_1, cue.label_2) == ("A", "", "", "")
        assert (cue.reformat, cue.reformat_on, placebo.reformat_on) == (form, "A", "both")
        assert cue.text_1 != PROSE
        assert cue.text_2 == item.candidate_2
        assert placebo.text_1 == cue.text_1  # candidate 1 in one form in both conditions
        assert placebo.text_2 == reformat(form, item.candidate_2, f"format:{form}:d7:2")
        assert placebo.target == "A"


def test_a_format_condition_shows_nothing_else() -> None:
    with pytest.raises(JudgeprobeError, match="no other cue"):
        parse_conditions({"X": {"reformat": "bullets", "target": "A", "label_1": "x"}}, "t")
    with pytest.raises(JudgeprobeError, match="target is the candidate it reformats"):
        parse_conditions({"X": {"reformat": "bullets", "reformat_on": "B", "target": "A"}}, "t")
    with pytest.raises(JudgeprobeError, match="placebo"):
        parse_conditions({"X": {"reformat": "bullets", "reformat_on": "both"}}, "t")
    with pytest.raises(JudgeprobeError, match="reformat"):
        parse_conditions({"X": {"reformat": "italics", "target": "A"}}, "t")
    ok = parse_conditions({"X": {"reformat": "spacing", "reformat_on": "B", "target": "B"}}, "t")
    cue = ok["X"].resolve(Item(item_id="i", document="D.", candidate_1="One.", candidate_2="Two."))
    assert cue.text_1 == "One."
    assert cue.text_2 != "Two."
    assert cue.target == "B"


def test_a_sweep_with_a_format_condition_writes_its_checks(tmp_path: Path) -> None:
    items = make_items(tmp_path / "items.jsonl", 3)
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, protocols=["baseline"],
                           conditions=["Blind", "FormatBullets", "FormatBulletsBoth"])  # fmt: skip
        assert main(["--config", str(cfg), "--out", str(tmp_path / "run"), "--no-progress"]) == 0
    checks = pl.read_csv(tmp_path / "run" / "attack_checks.csv")
    assert checks.height == 6
    assert set(checks["method"]) == {"format"}
    assert checks["preserved"].to_list() == [True] * 6
    judgments = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    bullets = judgments.filter(pl.col("condition") == "FormatBullets")
    assert set(bullets["attack"]) == {""}  # a format is no attack: its own columns say it
    assert (set(bullets["reformat"]), set(bullets["reformat_on"])) == ({"bullets"}, {"A"})
    assert set(bullets["target"]) == {"A"}


def test_selftest_recovers_a_planted_format_preference_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = selftest_main(["--out", str(tmp_path / "run"), "--items", "10", "--format", "0.5"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.split()[1:2] == ["format"]]
    assert code == 0, out
    assert len(lines) == 9  # FormatSpacing, FormatBullets, FormatEmphasis on each protocol
    assert all(line.startswith("PASS") and "LDS − Format" in line for line in lines)
    checks = pl.read_csv(tmp_path / "run" / "attack_checks.csv")
    assert checks.filter(pl.col("method") == "format")["preserved"].all()
