"""Prompt wordings (issue 30 item 2): the paraphrases, the config, the plan, the agreement metrics
(Fleiss' κ and the wording flip share) on hand-made tables, the card's wording row, the report,
and the self-test recovering a planted wording sensitivity."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.card.from_run import card_for_run
from judgeprobe.card.render import display, summary
from judgeprobe.card.rows import EXIT_BIASED, EXIT_INSENSITIVE, Card
from judgeprobe.conditions import builtin_conditions
from judgeprobe.core.records import Item
from judgeprobe.cue.config import SweepConfig, load_config
from judgeprobe.cue.stream import count, cue_jobs, protocols_for
from judgeprobe.metrics.compute import compute_metrics
from judgeprobe.metrics.lookup import MetricsTable
from judgeprobe.metrics.wording import agreement, fleiss
from judgeprobe.prompts import load_template
from judgeprobe.prompts.task import Task
from judgeprobe.protocols import PBP, Baseline, SCoT, templates_hash
from judgeprobe.protocols.base import Presentation
from judgeprobe.protocols.wording import BUILTIN, paraphrase, shipped, worded, wordings_of
from judgeprobe.report.headline import wording_sentences
from judgeprobe.selftest.__main__ import main as selftest_main
from judgeprobe.selftest.coverage import Setting, failures, measure
from judgeprobe.text.lexicons import load_lexicons
from tests.conftest import make_items, run_cli, write_config
from tests.test_card import ROOT, _row, _write, reading

JUDGE = {"name": "j", "url": "http://127.0.0.1:9/v1"}

# The original prompts' SHA-256 as released, and each protocol's template hash: wording 0 must
# never move a judgment key, a digest or a golden file.
ORIGINALS = {
    "baseline_v1": "e4150d1b2e2614c4207e69eca2cd68c15c448b13af00c55e9ba980cc4547dac1",
    "scot_v1": "e1188bdf1f9a0a675236462312bbfb255852a720305d2d5c0f7e489efcf122ff",
    "pbp_lock_v3": "05ac24d171c8d882054fff4760b4ea5d2e345e59349e4048e3da59e90adcf881",
    "pbp_score_v1": "606ce7deb44320fb345c40619cbc1663689c4b4f2e018957c9d86922757ffd4a",
    "pbp_rank_v1": "738879815496421e2a2aa9bac3fb9d8a4c7d2b9c6accf684e3aa2191164de555",
    "materials_v1": "34174d5a311294d7204d6b98b1cb217cf30dcd80156b9ba0b405df73dfbf3cbc",
}
PROTOCOL_HASHES = {
    "baseline": "c2b59418e9a3a613674c8ac7c20ff9d654bf31812206caa90645a7b0514d7996",
    "scot": "68b22a11b633a2fc8f13095e19faf75bb342363390ac68c11e21a4b009192518",
    "pbp": "7211d80d05cd8fe1d04ef91cdc07888de312db5dc8fe609c7752b0f150d0d491",
}


def _items(tmp_path: Path, n: int) -> list[Item]:
    path = make_items(tmp_path / "items.jsonl", n)
    return [Item.model_validate(orjson.loads(line)) for line in path.read_bytes().splitlines()]


def test_wording_0_is_the_original_byte_for_byte() -> None:
    for name, sha in ORIGINALS.items():
        assert hashlib.sha256(load_template(name).text.encode()).hexdigest() == sha
    for protocol in (Baseline(), SCoT(), PBP()):
        assert templates_hash(protocol.templates) == PROTOCOL_HASHES[protocol.name]
        assert paraphrase(protocol.templates[0], 0) == protocol.templates[0]


def test_every_builtin_protocol_ships_three_paraphrases_of_the_same_instructions() -> None:
    for name, cls in BUILTIN.items():
        original = cls()
        assert wordings_of(name) == shipped(original.templates) == 4
        texts = set()
        for k in range(4):
            protocol = worded(original, k) if k else original
            assert protocol.templates[-1] == "materials_v1"  # the screen is never reworded
            for before, after in zip(original.templates, protocol.templates, strict=True):
                a, b = load_template(before), load_template(after)
                assert a.placeholders == b.placeholders  # the same texts filled in
                # the same output format: every JSON key and verdict token of the original
                tokens = {
                    '"[1,2]"',
                    '"[2,1]"',
                    '"Tie"',
                    '"summary_1"',
                    '"summary_2"',
                    '"verdict"',
                    '"explanation"',
                    '"justification"',
                    '"criteria"',
                    '"notes"',
                    '"note"',
                    '"quotes"',
                    '"accuracy"',
                    '"fluency"',
                    "0-5",
                    "Locked notes:",
                    "Scores:",
                    "25 words",
                    "12 words",
                }
                assert {t for t in tokens if t in a.text} == {t for t in tokens if t in b.text}
                texts.add(b.text)
        assert len(texts) == 4 * (len(original.templates) - 1) + 1  # materials once
        with pytest.raises(ValueError, match="ships no wording 4"):
            worded(original, 4)


async def _prompt(protocol: Baseline | SCoT | PBP) -> str:
    seen: list[str] = []

    async def ask(messages: Any, reply_model: Any, max_tokens: int) -> Any:
        seen.append(messages[-1]["content"])
        raise RuntimeError("stop")

    p = Presentation("The doc.", "One.", "Two.", "", "")
    with pytest.raises(RuntimeError):
        await protocol.run(p, ask)
    return seen[0]


@pytest.mark.asyncio
async def test_a_worded_protocol_sends_its_paraphrase_and_keeps_the_materials() -> None:
    for cls in BUILTIN.values():
        original = await _prompt(cls())
        other = await _prompt(worded(cls(), 2))
        assert original != other
        shown = Presentation("The doc.", "One.", "Two.", "", "").materials()
        assert shown in original
        assert shown in other


def test_wording_jobs_follow_blind_in_both_orders_keyed_apart_and_counted(
    tmp_path: Path,
) -> None:
    base = {"protocols": ["baseline", "pbp"], "conditions": ["Blind", "True"], "order": "12",
            "swap": 1.0, "judges": [JUDGE]}  # fmt: skip
    cfg = SweepConfig(**base, wordings=3)
    items, conditions, protocols = _items(tmp_path, 3), builtin_conditions(), protocols_for(cfg)
    jobs = list(cue_jobs(cfg, protocols, items, conditions, {"j": "fp"}))
    keys = [j.key for j in jobs]
    assert len(set(keys)) == len(keys)
    by = {(j.condition, j.protocol.name, j.item_id, j.order): j for j in jobs}
    worded_jobs = [j for j in jobs if j.condition.startswith("BlindWording")]
    assert {j.condition for j in worded_jobs} == {"BlindWording1", "BlindWording2"}
    # each wording judges every Blind showing, in both orders (the swap), with Blind's screen
    blind = [j for j in jobs if j.condition == "Blind"]
    assert len(worded_jobs) == 2 * len(blind)
    assert {j.order for j in worded_jobs} == {"12", "21"}
    for j in worded_jobs:
        twin = by[("Blind", j.protocol.name, j.item_id, j.order)]
        assert j.presentation == twin.presentation
        assert j.target == "none"
        assert j.template_hash != twin.template_hash
        k = int(j.condition.removeprefix("BlindWording"))
        assert j.template_hash == templates_hash(worded(twin.protocol, k).templates)  # type: ignore[arg-type]
    counted = count(cfg, protocols, items, conditions)
    assert counted.judgments == len(jobs)
    assert counted.requests["baseline"] == sum(j.protocol.name == "baseline" for j in jobs)
    assert counted.requests["pbp"] == 3 * sum(j.protocol.name == "pbp" for j in jobs)
    # wordings = 1 plans exactly what a config without wordings did: the same keys, one digest
    plain = SweepConfig(**base)
    assert SweepConfig(**base, wordings=1).digest() == plain.digest() != cfg.digest()
    old = [j.key for j in cue_jobs(plain, protocols_for(plain), items, conditions, {"j": "fp"})]
    assert old == [j.key for j in jobs if not j.condition.startswith("BlindWording")]


def _worded(verdicts: list[list[str]], docs: list[int] | None = None) -> list[dict[str, Any]]:
    """Blind judgments of showing i under wording k (verdicts[i][k]; wording 0 is Blind)."""
    rows = []
    for i, per_wording in enumerate(verdicts):
        for k, verdict in enumerate(per_wording):
            row = _row("Blind", i, verdict)
            if docs is not None:
                row["document_id"] = f"d{docs[i]:04d}"
            rows.append({**row, "condition": "Blind" if k == 0 else f"BlindWording{k}"})
    return rows


HAND = [["A", "A", "A"], ["A", "B", "A"], ["Tie", "Tie", "B"], ["B", "B", "B"]]
"""Four showings under three wordings. Counts (A, B, Tie): (3,0,0) (2,1,0) (0,1,2) (0,3,0);
p = (5, 5, 2) / 12, P_e = 54/144 = 3/8; P_i = (Σn² − 3) / 6 = 1, 1/3, 1/3, 1, P̄ = 2/3;
κ = (2/3 − 3/8) / (1 − 3/8) = 7/15. Two of the four are not all equal: flip share 1/2."""


def _metric(tidy: pl.DataFrame, metric: str, condition: str = "Blind") -> dict[str, Any]:
    found = tidy.filter(
        (pl.col("metric") == metric) & (pl.col("condition") == condition)
        & pl.col("versus").is_null()
    )  # fmt: skip
    assert found.height == 1, (metric, condition, found)
    return found.row(0, named=True)


def test_kappa_and_flip_share_on_a_hand_made_table() -> None:
    j = pl.DataFrame(_worded(HAND), infer_schema_length=None)
    tidy = compute_metrics(j, load_lexicons(), None, differences=False)
    kappa, flip = _metric(tidy, "wording_kappa"), _metric(tidy, "wording_flip")
    assert kappa["value"] == pytest.approx(7 / 15)
    assert kappa["lo"] is None
    assert kappa["hi"] is None
    assert kappa["n"] == 4
    assert flip["value"] == pytest.approx(1 / 2)
    assert flip["n"] == 4
    assert flip["documents"] == 4
    assert flip["lo"] < 0.5 < flip["hi"]  # Clopper–Pearson on 2 of 4 documents
    assert _metric(tidy, "wording_dropped")["value"] == 0
    # each wording beside the original: its own flip rate against Blind
    assert _metric(tidy, "flip_rate", "BlindWording1")["value"] == pytest.approx(1 / 4)
    assert _metric(tidy, "flip_rate", "BlindWording2")["value"] == pytest.approx(1 / 4)
    table = agreement(j).row(0, named=True)
    assert (table["wordings"], table["rated"], table["flipped"]) == (3, 4, 2)
    assert table["kappa"] == pytest.approx(7 / 15)
    assert table["kappa_note"] == ""


def test_an_invalid_under_any_wording_leaves_the_showing_counted() -> None:
    rows = _worded([*HAND, ["A", "Invalid", "B"], ["Invalid", "A", "A"]])
    tidy = compute_metrics(pl.DataFrame(rows, infer_schema_length=None), load_lexicons(), None,
                           differences=False)  # fmt: skip
    assert _metric(tidy, "wording_kappa")["value"] == pytest.approx(7 / 15)  # the same four
    assert _metric(tidy, "wording_flip")["value"] == pytest.approx(2 / 4)
    assert _metric(tidy, "wording_dropped")["value"] == pytest.approx(2 / 6)
    table = agreement(pl.DataFrame(rows, infer_schema_length=None)).row(0, named=True)
    assert (table["showings"], table["rated"], table["dropped"]) == (6, 4, 2)


def test_kappa_is_undefined_when_one_category_holds_every_verdict() -> None:
    for only in ("Tie", "A"):
        j = pl.DataFrame(_worded([[only] * 3] * 5), infer_schema_length=None)
        tidy = compute_metrics(j, load_lexicons(), None, differences=False)
        assert _metric(tidy, "wording_kappa")["value"] is None  # null, never NaN
        assert _metric(tidy, "wording_flip")["value"] == 0
        note = agreement(j)["kappa_note"][0]
        assert note == f"undefined: every verdict is {only} (chance agreement is 1)"
    assert fleiss(np.zeros((0, 3))).note.startswith("undefined: no showing")
    # a run without wordings has no wording metric at all
    plain = compute_metrics(pl.DataFrame(_worded([["A"], ["B"]]), infer_schema_length=None),
                            load_lexicons(), None, differences=False)  # fmt: skip
    assert not plain.filter(pl.col("metric").str.starts_with("wording")).height


def test_the_flip_share_interval_is_over_documents() -> None:
    """Two showings of one document count once: the interval is wider than over items."""
    flips = [["A", "B"], ["A", "A"]] * 10
    apart = compute_metrics(pl.DataFrame(_worded(flips), infer_schema_length=None),
                            load_lexicons(), None, differences=False)  # fmt: skip
    docs = [i // 2 for i in range(20)]  # each document: one showing flipped, one not
    together = compute_metrics(pl.DataFrame(_worded(flips, docs), infer_schema_length=None),
                               load_lexicons(), None, differences=False)  # fmt: skip
    a, t = _metric(apart, "wording_flip"), _metric(together, "wording_flip")
    assert a["value"] == t["value"] == 0.5
    assert (a["documents"], t["documents"]) == (20, 10)
    assert t["hi"] - t["lo"] != a["hi"] - a["lo"]


V3 = ROOT / "judgeprobe" / "card" / "thresholds_v3.toml"


def _card(tmp_path: Path, rows: list[dict[str, Any]], thresholds: Path | None = None) -> Card:
    return card_for_run(_write(tmp_path, rows), thresholds=thresholds, resamples=200)


def _flipping(n: int, flips: int, k: int = 3) -> list[list[str]]:
    """n showings under k wordings; the first ``flips`` change verdict under the last wording."""
    out = []
    for i in range(n):
        v = "A" if i % 2 else "B"
        out.append([v] * (k - 1) + [("B" if v == "A" else "A") if i < flips else v])
    return out


def test_a_judge_that_changes_with_the_wording_is_unstable_and_a_steady_reader_stable(
    tmp_path: Path,
) -> None:
    moved = _card(tmp_path / "a", _worded(_flipping(200, 60)) + reading(200, intact=150))
    row = moved.rows.filter(pl.col("kind") == "wording").row(0, named=True)
    assert (row["row"], row["n"], row["documents"]) == ("wording", 200, 200)
    assert row["effect_name"] == "flip share over 3 wordings"
    assert row["effect"] == pytest.approx(60 / 200)
    assert row["effect_lo"] > 0.1
    assert row["verdict"] == "UNSTABLE"
    assert row["threshold"] == 0.1
    assert moved.exit_code == EXIT_BIASED  # UNSTABLE gates CI as BIASED does
    assert "a row is UNSTABLE" in summary(moved)
    note = display(moved).filter(pl.col("row") == "wording")["note"][0]
    assert note.startswith("Fleiss κ ")
    assert "60 of 200 Blind showings changed" in note
    steady = _card(tmp_path / "b", _worded(_flipping(200, 0)) + reading(200, intact=150))
    got = steady.rows.filter(pl.col("kind") == "wording").row(0, named=True)
    assert got["effect"] == 0
    assert got["effect_hi"] <= 0.1
    assert got["verdict"] == "STABLE"
    assert steady.exit_code == 0
    few = _card(tmp_path / "c", _worded(_flipping(12, 1)) + reading(200, intact=150))
    assert few.rows.filter(pl.col("kind") == "wording")["verdict"][0] == "UNDERPOWERED"
    old = _card(tmp_path / "d", _worded(_flipping(200, 60)) + reading(200, 150), thresholds=V3)
    assert "wording" not in old.rows["kind"].to_list()  # a version-3 card has no wording rows


@pytest.mark.parametrize("answer", ["A", "Tie"])
def test_a_judge_that_never_reads_is_never_stable(tmp_path: Path, answer: str) -> None:
    """Always the first-shown summary, or always Tie: flip share 0 by construction."""
    rows = _worded([[answer] * 4] * 300)
    for reads, extra in (("not measured", []), ("blind", reading(300, intact=0))):
        card = _card(tmp_path / reads, rows + extra)
        row = card.rows.filter(pl.col("kind") == "wording").row(0, named=True)
        assert row["effect"] == 0.0
        assert row["effect_hi"] <= 0.1
        assert row["verdict"] == "INSENSITIVE", reads
        assert "STABLE" not in card.rows["verdict"].to_list()
        assert card.exit_code == EXIT_INSENSITIVE
        note = display(card).filter(pl.col("row") == "wording")["note"][0]
        assert f"Fleiss κ undefined: every verdict is {answer}" in note


OWN_PROMPT = (
    "Context: {CONTEXT}\nFirst: {RESPONSE_1}\nSecond: {RESPONSE_2}\nSay [[A]], [[B]] or [[C]]."
)
VERDICT = '{ pattern = \'\\[\\[(A|B|C)\\]\\]\', map = { A = "1", B = "2", C = "tie" } }'


def _toml(tmp_path: Path, head: str, judge: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'{head}\n[[judges]]\nname = "mine"\nurl = "http://127.0.0.1:9/v1"\n{judge}')
    return path


def _own(where: Path, *wordings: str) -> str:
    """A judge's own prompt and its ``wordings`` as files in a folder of their own."""
    tmp_path = where / f"own{len(list(where.glob('own*')))}"
    tmp_path.mkdir()
    (tmp_path / "p.txt").write_text(OWN_PROMPT)
    for i, text in enumerate(wordings):
        (tmp_path / f"w{i}.txt").write_text(text)
    files = ", ".join(f'"{tmp_path / f"w{i}.txt"}"' for i in range(len(wordings)))
    return f'prompt = "{tmp_path / "p.txt"}"\nverdict = {VERDICT}\nwordings = [{files}]\n'


OTHER = "Judge this. Context: {CONTEXT}\nA: {RESPONSE_1}\nB: {RESPONSE_2}\n[[A]]/[[B]]/[[C]]"


@pytest.mark.parametrize(
    ("head", "judge", "needle"),
    [
        ("wordings = 5", "", "wordings = 5: protocol baseline ships 4 (the original and 3"),
        ('protocols = ["scot", "pbp"]\nwordings = 9', "", "protocol scot ships 4"),
        ("wordings = 0", "", "wordings: Input should be greater than or equal to 1"),
        ('wordings = ["a.txt", "b.txt"]', "", "put it on the judge ([[judges]] wordings"),
        ('conditions = ["True"]\nwordings = 2', "", "add Blind to conditions"),
        ('protocols = ["own"]\nwordings = 2', "OWN", "protocol own's wordings are its judges'"),
        ("", 'wordings = ["x.txt"]\n', "wordings are paraphrases of the judge's own prompt"),
        ("", "OWN", "judged under protocol own: add own to protocols"),
        ('protocols = ["own"]', "MISSING", "no such file"),
        ('protocols = ["own"]', "NOCONTEXT", "its placeholders must be the prompt's"),
        ('protocols = ["own"]', "COPY", "the same text as"),
    ],
)
def test_bad_wordings_are_one_line_errors(tmp_path: Path, head: str, judge: str,
                                          needle: str) -> None:  # fmt: skip
    lines = {
        "OWN": _own(tmp_path, OTHER),
        "MISSING": _own(tmp_path).replace("wordings = []", 'wordings = ["nowhere/w.txt"]'),
        "NOCONTEXT": _own(tmp_path, "A: {RESPONSE_1}\nB: {RESPONSE_2}"),
        "COPY": _own(tmp_path, OTHER, OTHER),
    }
    with pytest.raises(JudgeprobeError) as err:
        load_config(_toml(tmp_path, head, lines.get(judge, judge)))
    assert "\n" not in str(err.value)
    assert needle in str(err.value), str(err.value)


def test_a_bad_wording_config_exits_2_with_one_error_line(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", "http://127.0.0.1:9/v1", items)
    cfg.write_text("wordings = 7\n" + cfg.read_text())
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: ")
    assert lines[0].endswith(
        "wordings = 7: protocol baseline ships 4 (the original and 3 paraphrases)"
    )


def test_own_wordings_are_judged_under_each_prompt_file_keyed_by_its_hash(tmp_path: Path) -> None:
    head = 'protocols = ["own", "baseline"]\nconditions = ["Blind"]\nwordings = 2\nswap = 0'
    path = _toml(tmp_path, head,
                 _own(tmp_path, OTHER, OTHER + " "))  # fmt: skip
    cfg = load_config(path)
    judge = cfg.judges[0]
    assert [t.text for t in judge.own_wordings] == [OTHER, OTHER + " "]
    items, conditions = _items(tmp_path, 2), builtin_conditions()
    protocols = protocols_for(cfg)
    jobs = list(cue_jobs(cfg, protocols, items, conditions, {"mine": "fp"}))
    own = {j.condition for j in jobs if j.protocol.name == "own"}
    assert own == {"Blind", "BlindWording1", "BlindWording2"}  # the judge's own list: K = 3
    built = {j.condition for j in jobs if j.protocol.name == "baseline"}
    assert built == {"Blind", "BlindWording1"}  # the sweep's wordings = 2
    hashes = {j.condition: j.template_hash for j in jobs if j.protocol.name == "own"}
    assert hashes["BlindWording1"] == judge.own_wordings[0].sha256
    assert hashes["Blind"] == judge.own_prompt.sha256  # type: ignore[union-attr]
    assert (
        len({j.key for j in jobs})
        == len(jobs)
        == count(cfg, protocols, items, conditions).judgments
    )
    record = judge.own_record()
    assert [w["sha256"] for w in record["wordings"]] == [w.sha256 for w in judge.own_wordings]
    plain = load_config(_toml(tmp_path, 'protocols = ["own"]', _own(tmp_path).replace(
        "wordings = []\n", "")))  # fmt: skip
    assert "wordings" not in plain.judges[0].own_record()  # records and digests as before
    assert "wordings" not in plain.judges[0].model_dump()


@pytest.mark.parametrize("own", [False, True])
def test_the_selftest_recovers_a_planted_wording_sensitivity_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own: bool
) -> None:
    args = ["--out", str(tmp_path / "run"), "--items", "12", "--wording", "0.4"]
    assert selftest_main(args + ["--own"] * own) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line[6:].startswith("wording ")]
    assert len(lines) == (1 if own else 3)  # one per protocol
    assert all(line.startswith("PASS") and "planted 0.400" in line for line in lines), lines
    assert all("UNSTABLE" in line for line in lines)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Agreement across wordings" in report
    assert "changes its verdict with the wording of its prompt" in report
    # a planted value changed after the sweep: the wording lines miss
    assert selftest_main([*args[:4], "--wording", "0.0", "--check-only"] + ["--own"] * own) == 1


def test_a_judge_that_does_not_read_passes_no_wording_row_in_the_selftest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--out", str(tmp_path / "run"), "--items", "40", "--wording", "0.4", "--blind", "first"]
    assert selftest_main(args) == 0
    out = capsys.readouterr().out
    blind = [line for line in out.splitlines() if "blind judge" in line]
    assert len(blind) == 3
    assert all(line.startswith("PASS") and "wording INSENSITIVE" in line for line in blind), blind


def test_the_flip_share_interval_keeps_its_promise_through_the_metrics() -> None:
    """Coverage by simulation (``selftest.coverage``, kind ``wording``): simulated judges whose
    Blind showings change under a third wording with a known probability, one and four
    correlated showings per document, through ``compute_metrics`` as metrics_ci.csv is written."""
    settings = [Setting("wording", 10, 4, 0.2), Setting("wording", 30, 1, 0.05),
                Setting("wording", 10, 1, 0.0)]  # fmt: skip
    table = measure(settings, judges=300, seed=30)
    assert (table["judges"] == 300).all()
    assert failures(table).is_empty(), table
    assert (table["coverage"] >= 0.93).all(), table
    assert (table["zero_width"] == 0).all()  # 0 flips of n still has an upper bound above 0


def test_the_headline_says_in_one_line_when_a_judge_changes_with_its_wording() -> None:
    lex = load_lexicons()
    moved = pl.DataFrame(_worded(_flipping(200, 60)), infer_schema_length=None)
    lines = wording_sentences(
        MetricsTable(compute_metrics(moved, lex, None, differences=False)), moved
    )
    assert len(lines) == 1
    assert lines[0].startswith("⚠ j (baseline) changes its verdict with the wording of its prompt:")
    assert "30% [" in lines[0]
    assert "of 200 Blind showings" in lines[0]
    assert "3 wordings" in lines[0]
    steady = pl.DataFrame(_worded(_flipping(200, 2)), infer_schema_length=None)
    quiet = wording_sentences(
        MetricsTable(compute_metrics(steady, lex, None, differences=False)), steady
    )
    assert len(quiet) == 1
    assert quiet[0].startswith("Under other wordings of the same instructions no judge changed")
    plain = pl.DataFrame(_worded([["A"], ["B"]]), infer_schema_length=None)
    assert (
        wording_sentences(MetricsTable(compute_metrics(plain, lex, None, differences=False)), plain)
        == []
    )


def test_the_battery_and_its_smoke_twin_judge_every_wording() -> None:
    full = load_config(ROOT / "experiments" / "battery.toml")
    smoke = load_config(ROOT / "experiments" / "smoke" / "battery.toml")
    assert full.wordings == smoke.wordings == wordings_of("baseline") == 4


def test_a_task_rewords_every_paraphrase_as_it_rewords_the_original() -> None:
    qa = Task.model_validate("qa")
    for cls in BUILTIN.values():
        for k in range(1, 4):
            for name in worded(cls(task=qa), k).templates:
                text = load_template(name, qa).text
                assert "summar" not in text.replace("summary_", "").lower(), name
                assert not {"document", "accuracy", "fluency"} & set(text.lower().split()), name
                listed = "accuracy" in load_template(name).text  # the criteria, where named
                assert ("correctness" in text) == listed, name
        protocol = worded(cls(task=qa), 2)
        assert protocol.task == qa  # the wording keeps the task, so its hash is the task's
        assert templates_hash(protocol.templates, qa) != templates_hash(protocol.templates)


def test_a_pointwise_judge_is_scored_again_under_each_of_its_wordings(tmp_path: Path) -> None:
    """A pointwise judge (kind = "score") judges each item once, in candidate order: each of its
    wordings scores every Blind item again, two requests per judgment."""
    prompt = "[Question]\n{CONTEXT}\n[Answer] (label: {LABEL})\n{RESPONSE}\nRating: [[k]]\n"
    other = "Rate this answer.\n{CONTEXT}\n{LABEL}\n{RESPONSE}\nRating: [[k]]\n"
    (tmp_path / "p.txt").write_text(prompt)
    (tmp_path / "w.txt").write_text(other)
    judge = (
        f'prompt = "{tmp_path / "p.txt"}"\nkind = "score"\nwordings = ["{tmp_path / "w.txt"}"]\n'
        r"score = { pattern = 'Rating: \[\[(\d+)\]\]', min = 1, max = 10 }"
        "\n"
    )
    cfg = load_config(_toml(tmp_path, 'protocols = ["own"]\nconditions = ["Blind", "True"]', judge))
    items, conditions, protocols = _items(tmp_path, 3), builtin_conditions(), protocols_for(cfg)
    jobs = list(cue_jobs(cfg, protocols, items, conditions, {"mine": "fp"}))
    worded_jobs = [j for j in jobs if j.condition == "BlindWording1"]
    assert len(worded_jobs) == 3
    assert {j.order for j in worded_jobs} == {"12"}
    assert {j.template_hash for j in worded_jobs} == {cfg.judges[0].own_wordings[0].sha256}
    counted = count(cfg, protocols, items, conditions)
    assert counted.judgments == len(jobs) == 9
    assert counted.requests["own"] == 2 * len(jobs)
