"""The review page in headless Chromium (Playwright driving Debian's chromium).

A real run on the fake judge, ``judgeprobe review`` serving it on a free port: the reviewer
rejects a degraded copy, edits a rewrite and labels three pairs, with the keys and the
mouse; after a reload the decisions are on the page and in the run's review store; the next
``judgeprobe run --resume`` judges the edited text, and ``judgeprobe card`` leaves the rejected
copy's judgments out.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe.runs.review import read_decisions, read_labels
from judgeprobe.runs.rundir import RunDir
from tests import chromium
from tests.conftest import ROOT, review_server, run_cli, town_items, write_config
from tests.fakeserver import FakeJudge

CONDITIONS = ["Blind", "Verbosity", "DegradedNumber"]
EDIT = "The council approved 42 new homes; EDITED-BY-ADA taxes would not rise."


def api(url: str, path: str) -> Any:
    with urllib.request.urlopen(url + path.lstrip("/"), timeout=30) as reply:
        return orjson.loads(reply.read())


def _progress(page: Any, text: str) -> None:
    """Wait until the progress line reads ``text``."""
    page.wait_for_function(
        "(want) => document.getElementById('progress').textContent === want", arg=text
    )


def _filter(page: Any, **values: str) -> None:
    """Set the text filters (the others back to all)."""
    for key in ("condition", "kind", "check", "verdict", "decision"):
        page.select_option(f"#f-{key}", values.get(key, ""))


@pytest.fixture
def judged_run(tmp_path: Path) -> Iterator[tuple[Path, Path, FakeJudge]]:
    """A run of the fake judge over the towns: rewrites (Verbosity) and degraded copies."""
    items = town_items(tmp_path / "items.jsonl")
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items, conditions=CONDITIONS,
                           protocols=["baseline"], order="12")  # fmt: skip
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        assert proc.returncode == 0, proc.stderr
        yield tmp_path / "run", cfg, judge


def test_review_reject_edit_label_reload_resume_card(
    judged_run: tuple[Path, Path, FakeJudge], tmp_path: Path
) -> None:
    run, cfg, judge = judged_run
    with review_server(run) as url, chromium.page() as tab:
        page = tab.page
        page.goto(url)
        page.wait_for_selector("body[data-ready]")
        texts = api(url, "/api/texts")["texts"]
        n = len(texts)
        assert n == 8  # 4 Verbosity rewrites, 4 degraded copies
        _progress(page, f"reviewed 0 of {n}")
        assert page.text_content("#reviewer") == "ada"
        keys = page.text_content("#keys-texts") or ""
        for shown in ("j", "k", "a accept", "r reject", "e edit", "? help"):
            assert shown in keys.replace("/", " "), keys

        # Reject one degraded copy, with a note: its changed number is marked on both sides.
        _filter(page, condition="DegradedNumber")
        assert page.locator("#list li").count() == 4
        page.click("#list li >> nth=0")
        degraded = next(
            t for t in texts if t["id"] == page.get_attribute("#list li.current", "data-id")
        )
        checks = pl.read_csv(run / "degrade_checks.csv", infer_schema=False)
        change = checks.filter(pl.col("item_id") == degraded["item_id"]).row(0, named=True)
        assert page.text_content("#t-original del") == change["before"]
        assert page.text_content("#t-text ins") == change["after"]
        assert page.text_content("#t-check") == "check passed"
        assert page.locator("#t-verdicts tbody tr").count() == 1  # baseline, one order
        page.fill("#note", "the copy is still right")
        page.locator("#note").press("Escape")  # leave the note box: keys act again
        page.keyboard.press("r")
        _progress(page, f"reviewed 1 of {n}")

        # Edit one rewrite with the keyboard: e opens the box, Ctrl+Enter saves.
        _filter(page, condition="Verbosity")
        page.click("#list li >> nth=0")
        rewrite_id = page.get_attribute("#list li.current", "data-id")
        assert rewrite_id is not None
        page.keyboard.press("j")  # next, then back
        assert page.get_attribute("#list li.current", "data-id") != rewrite_id
        page.keyboard.press("k")
        assert page.get_attribute("#list li.current", "data-id") == rewrite_id
        page.keyboard.press("e")
        assert page.is_visible("#edit-text")
        page.keyboard.press("Control+Enter")  # unchanged: the server refuses, the page says so
        page.wait_for_function("() => document.getElementById('status').textContent !== ''")
        assert "accept it instead" in (page.text_content("#status") or "")
        assert page.is_visible("#edit-text")  # still open on the same text
        assert page.get_attribute("#list li.current", "data-id") == rewrite_id
        page.fill("#edit-text", EDIT)
        page.keyboard.press("Control+Enter")
        _progress(page, f"reviewed 2 of {n}")
        page.click(f"#list li[data-id='{rewrite_id}']")
        assert page.text_content("#t-text-head") == "Edited"
        assert page.text_content("#t-text") == EDIT
        assert "EDITED-BY-ADA" in " ".join(page.locator("#t-text ins").all_text_contents())

        # Help and the other filters.
        page.keyboard.press("?")
        assert page.is_visible("#help")
        page.keyboard.press("?")
        assert not page.is_visible("#help")
        _filter(page, decision="reject")
        assert page.locator("#list li").count() == 1
        _filter(page, kind="rewrite")
        assert page.locator("#list li").count() == 4
        verdicts = page.locator("#f-verdict option").evaluate_all("(o) => o.map((x) => x.value)")
        assert verdicts[0] == ""
        assert set(verdicts[1:]) == {v["verdict"] for t in texts for v in t["verdicts"]}
        _filter(page, verdict=verdicts[1])
        want = sum(any(v["verdict"] == verdicts[1] for v in t["verdicts"]) for t in texts)
        assert page.locator("#list li").count() == want
        _filter(page, check="failed")
        assert page.locator("#list li").count() == 0
        assert page.is_visible("#texts-empty")

        # Three blind preferences: 1 and tie by key, 2 by the mouse with a note.
        page.click("#tab-labels")
        pairs = api(url, "/api/pairs")["pairs"]
        assert len(pairs) >= 3
        _progress(page, f"labelled 0 of {len(pairs)}")
        page.keyboard.press("1")
        _progress(page, f"labelled 1 of {len(pairs)}")
        page.fill("#label-note", "2 names the mayor")
        page.click("#pick-2")
        _progress(page, f"labelled 2 of {len(pairs)}")
        page.keyboard.press("t")
        _progress(page, f"labelled 3 of {len(pairs)}")

        # Reload: everything is still there, from the server.
        page.reload()
        page.wait_for_selector("body[data-ready]")
        _progress(page, f"labelled 3 of {len(pairs)}")  # the tab is kept in the URL
        marks = page.locator("#pair-list li .mark").all_text_contents()
        assert marks[:3] == ["1 better", "2 better", "tie"]
        assert set(marks[3:]) <= {"to label"}
        page.click("#pair-list li >> nth=1")
        assert "2 names the mayor" in (page.text_content("#p-label") or "")
        page.click("#tab-texts")
        _progress(page, f"reviewed 2 of {n}")
        _filter(page, decision="reject")
        assert page.get_attribute("#list li.current", "data-id") == degraded["id"]
        decision = page.text_content("#t-decision") or ""
        assert decision.startswith("Rejected by ada at ")
        assert decision.endswith("the copy is still right")
        assert tab.dialogs == []
        assert tab.errors == []
        page.screenshot(path=str(tmp_path / "review.png"))

    # The run's review store holds them, with who: the decisions, and the labels in the item's
    # own terms (the page's 1 and 2 unblinded by the sample's key).
    decisions = read_decisions(RunDir(run))
    assert set(decisions) == {degraded["id"], rewrite_id}
    assert decisions[degraded["id"]].action == "reject"
    assert decisions[degraded["id"]].note == "the copy is still right"
    assert decisions[rewrite_id].action == "edit"
    assert decisions[rewrite_id].text == EDIT
    assert {d.who for d in decisions.values()} == {"ada"}
    labels = sorted(
        read_labels(RunDir(run)), key=lambda x: [p["id"] for p in pairs].index(x.pair_id)
    )
    assert [x.pair_id for x in labels] == [p["id"] for p in pairs[:3]]
    assert [x.preferred for x in labels][2] == "Tie"
    assert {x.preferred for x in labels[:2]} <= {"A", "B"}
    assert [x.note for x in labels] == ["", "2 names the mayor", ""]
    assert {x.who for x in labels} == {"ada"}

    _resume_and_card_honour_it(run, cfg, judge, degraded["id"], rewrite_id)


def _resume_and_card_honour_it(
    run: Path, cfg: Path, judge: FakeJudge, rejected: str, edited: str
) -> None:
    """The next resume judges the edited text (and asks nothing else) and records the review
    in the manifest; the card leaves the rejected copy's judgment out and says why."""
    sent = judge.chat_requests
    proc = run_cli("--config", str(cfg), "--out", str(run), "--resume")
    assert proc.returncode == 0, proc.stderr
    asked = [orjson.dumps(b["messages"]).decode() for b in judge.bodies]
    assert judge.chat_requests == sent + 1  # the edited rewrite, in its one order
    assert "EDITED-BY-ADA" in asked[-1]
    assert not any("EDITED-BY-ADA" in m for m in asked[:sent])
    review = orjson.loads((run / "manifest.json").read_bytes())["review"]
    assert (review["accept"], review["reject"], review["edit"]) == (0, 1, 1)
    assert [t["id"] for t in review["rejected_texts"]] == [rejected]
    assert review["rejected_texts"][0]["note"] == "the copy is still right"
    assert review["edited_texts"] == [edited]
    # The planned counts say what the review leaves out, and why.
    assert "1 of them show a text the review rejected (1 text)" in proc.stderr, proc.stderr
    card = subprocess.run(
        [sys.executable, "-m", "judgeprobe", "card", str(run), "--resamples", "50"],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert card.returncode in (0, 5, 6, 7), card.stderr
    text = (run / "card.md").read_text(encoding="utf-8")
    assert "2 generated texts reviewed: 0 accepted, 1 rejected, 1 edited." in text
    assert "Rejected texts (1) leave 1 judgment out of every table and the card" in text
    assert "the copy is still right" in text
