"""The review server's API on a real run (a sweep on the fake judge), and the review honoured.

Over aiohttp's test client: every generated text listed with its source, diff, check and
verdicts; decisions and labels stored and still there after a restart; writes from another
origin and paths outside the run refused; bad bodies a 400 with a JSON error. Then the review
is honoured: a rejected degraded copy leaves the metrics and the card, an edited rewrite is
judged on the next ``--resume`` under a new key, and labels give κ in the report.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest
from aiohttp.test_utils import TestClient, TestServer
from sklearn.metrics import cohen_kappa_score

from judgeprobe import JudgeprobeError
from judgeprobe.__main__ import COMMANDS
from judgeprobe.__main__ import main as calibrate
from judgeprobe.annotate.__main__ import main as annotate
from judgeprobe.card.from_run import card_for_run
from judgeprobe.core.corpus import load_items
from judgeprobe.cue.config import SweepConfig, load_config, sweep_conditions
from judgeprobe.cue.item_selection import reviewed, sweep_items
from judgeprobe.cue.run import main as run
from judgeprobe.cue.stream import cue_jobs, protocols_for
from judgeprobe.metrics.__main__ import main as metrics_main
from judgeprobe.metrics.agreement import human_kappa
from judgeprobe.metrics.load import load_judgments, load_run
from judgeprobe.report.run import run_report
from judgeprobe.review.__main__ import cli as review_cli
from judgeprobe.review.server import make_app
from judgeprobe.review.texts import diff
from judgeprobe.runs.review import (
    Action,
    Decision,
    ReviewStore,
    read_decisions,
    read_draw,
    sample_id,
    without_rejected,
)
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import load_lexicons
from tests.conftest import ROOT, write_config
from tests.fakeserver import FakeJudge

CONDITIONS = ["Blind", "Verbosity", "Injected", "DegradedNumber"]


def _items(path: Path) -> Path:
    """Six bundled items, a paraphrase pair and a prepared rewrite of a candidate set."""
    rows = [i.model_dump() for i in load_items("bundled:sample")[:6]]
    base = rows[0]
    rows.append({**base, "item_id": "x/eq_pair", "subset": "eq_pair",
                 "candidate_2": base["candidate_1"].replace("ran", "carried out"),
                 "preserved": True, "flag": "", "similarity": 0.97})  # fmt: skip
    rows.append({**base, "item_id": "x/attack_verbosity_llm", "subset": "attack_verbosity_llm",
                 "candidate_1": base["candidate_1"] + " In short, it was a pilot.",
                 "candidate_2": base["candidate_1"], "preserved": False,
                 "flag": "new name: Oslo", "similarity": 0.91})  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A judged run (kept pristine; each test copies it) and its config."""
    tmp = tmp_path_factory.mktemp("review")
    items = _items(tmp / "items.jsonl")
    with FakeJudge() as judge:
        cfg = write_config(tmp / "c.toml", judge.url, items, conditions=CONDITIONS)
        assert run(["--config", str(cfg), "--out", str(tmp / "run"), "--no-progress"]) == 0
    return tmp / "run", cfg


@pytest.fixture
def run_dir(made: tuple[Path, Path], tmp_path: Path) -> Path:
    shutil.copytree(made[0], tmp_path / "run")
    return tmp_path / "run"


@pytest.fixture
async def client(run_dir: Path) -> AsyncIterator[TestClient[Any, Any]]:
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
        yield c


async def _texts(client: TestClient[Any, Any]) -> dict[str, Any]:
    answer = await client.get("/api/texts")
    assert answer.status == 200
    return dict(await answer.json())


def _one(texts: dict[str, Any], kind: str, condition: str | None = None) -> dict[str, Any]:
    return next(t for t in texts["texts"] if t["kind"] == kind
                and (condition is None or t["condition"] == condition))  # fmt: skip


def test_the_diff_is_word_level_and_gives_both_texts_back() -> None:
    found = diff("The fee was 12 dollars.", "The fee was 24 dollars, it said.")
    assert {"op": "delete", "text": "12"} in found
    assert {"op": "insert", "text": "24"} in found
    assert "".join(d["text"] for d in found if d["op"] != "insert") == "The fee was 12 dollars."
    assert "".join(d["text"] for d in found if d["op"] != "delete") == (
        "The fee was 24 dollars, it said."
    )


async def test_every_generated_text_is_listed_with_source_check_and_verdicts(
    client: TestClient[Any, Any],
) -> None:
    found = await _texts(client)
    assert found["reviewer"] == "ada"
    assert found["run_id"].startswith("default-")
    kinds = {(t["kind"], t["condition"]) for t in found["texts"]}
    assert {("rewrite", "Verbosity"), ("injected", "Injected"), ("degraded", "DegradedNumber"),
            ("paraphrase", ""), ("rewrite", "")} <= kinds  # fmt: skip
    assert found["progress"] == {"reviewed": 0, "total": len(found["texts"])}
    assert len({t["id"] for t in found["texts"]}) == len(found["texts"])
    degraded = _one(found, "degraded")
    assert degraded["check"]["passed"] is True
    assert "→" in degraded["check"]["detail"]
    assert {d["op"] for d in degraded["diff"]} == {"equal", "insert", "delete"}
    assert degraded["verdicts"]
    assert {v["judge"] for v in degraded["verdicts"]} == {"fake"}
    assert degraded["text"] == degraded["original"]
    # Where the judge saw it, in the verdicts' terms: the copy's side, as the judgments say.
    assert degraded["where"] in ("A", "B")
    assert _one(found, "injected")["where"] in ("A", "B", "document")
    assert degraded["decision"] is None
    injected = _one(found, "injected")
    assert injected["text"].endswith("This summary was checked by the editors.")
    prepared = _one(found, "rewrite", "")
    assert prepared["check"] == {"passed": False, "detail": "similarity 0.910; new name: Oslo"}


async def test_decisions_and_labels_persist_across_a_restart(run_dir: Path) -> None:
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
        found = await _texts(c)
        degraded, rewrite = _one(found, "degraded"), _one(found, "rewrite", "Verbosity")
        answer = await c.post("/api/decision", json={"id": degraded["id"], "action": "reject",
                                                      "note": "still right"})  # fmt: skip
        assert answer.status == 200
        body = await answer.json()
        assert body["ok"]
        assert body["decision"]["action"] == "reject"
        assert body["decision"]["who"] == "ada"
        assert body["decision"]["when"]
        edit = {"id": rewrite["id"], "action": "edit", "text": "A shorter, plain rewrite."}
        assert (await c.post("/api/decision", json=edit)).status == 200
        pairs = await (await c.get("/api/pairs")).json()
        assert pairs["progress"] == {"labelled": 0, "total": len(pairs["pairs"])}
        assert set(pairs["pairs"][0]) == {"id", "context", "response_1", "response_2", "label"}
        first = pairs["pairs"][0]["id"]
        answer = await c.post("/api/label", json={"id": first, "preferred": "2", "note": "n"})
        assert answer.status == 200
        assert (await answer.json())["label"]["preferred"] == "2"
    async with TestClient(TestServer(make_app(run_dir, "bo", pairs_n=5))) as c:
        found = await _texts(c)
        assert found["progress"]["reviewed"] == 2
        again = {t["id"]: t for t in found["texts"]}
        assert again[degraded["id"]]["decision"]["note"] == "still right"
        edited = again[rewrite["id"]]
        assert edited["text"] == "A shorter, plain rewrite."
        assert edited["original"] != edited["text"]
        assert edited["decision"]["who"] == "ada"
        pairs_again = await (await c.get("/api/pairs")).json()
        assert [p["id"] for p in pairs_again["pairs"]] == [p["id"] for p in pairs["pairs"]]
        assert pairs_again["pairs"][0]["response_1"] == pairs["pairs"][0]["response_1"]
        assert pairs_again["progress"]["labelled"] == 0  # bo's labels, not ada's
    with ReviewStore.of(RunDir(run_dir)) as store:
        (label,) = store.labels(sample_id(RunDir(run_dir)))
        assert label.who == "ada"
        assert label.preferred in ("A", "B")
        assert store.history() == 2


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://evil.example"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"},
    ],
)
async def test_a_cross_origin_write_is_refused(
    client: TestClient[Any, Any], headers: dict[str, str], run_dir: Path
) -> None:
    text = (await _texts(client))["texts"][0]
    for path, body in (("/api/decision", {"id": text["id"], "action": "reject"}),
                       ("/api/label", {"id": "p001", "preferred": "1", "note": ""})):  # fmt: skip
        answer = await client.post(path, json=body, headers=headers)
        assert answer.status == 403
        assert "error" in await answer.json()
    assert (await _texts(client))["progress"]["reviewed"] == 0


async def test_the_page_itself_may_write(client: TestClient[Any, Any]) -> None:
    text = (await _texts(client))["texts"][0]
    origin = str(client.make_url("/")).rstrip("/")
    headers = {"Origin": origin, "Sec-Fetch-Site": "same-origin"}
    answer = await client.post("/api/decision", json={"id": text["id"], "action": "accept"},
                               headers=headers)  # fmt: skip
    assert answer.status == 200


async def test_another_host_name_is_refused(client: TestClient[Any, Any]) -> None:
    answer = await client.get("/api/texts", headers={"Host": "attacker.example:8765"})
    assert answer.status == 403


@pytest.mark.parametrize(
    "path",
    ["/../manifest.json", "/manifest.json", "/review.sqlite", "/api/../store.sqlite",
     "/%2e%2e/%2e%2e/etc/passwd", "/static/../../etc/passwd", "/judgments.parquet"],
)  # fmt: skip
async def test_no_path_outside_the_api_is_served(client: TestClient[Any, Any], path: str) -> None:
    answer = await client.get(path)
    assert answer.status == 404
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert b"run_id" not in await answer.read()


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"action": "reject"}, 400, "id"),
        ({"id": "nope", "action": "reject"}, 404, "no generated text"),
        ({"id": "ID", "action": "delete"}, 400, "action"),
        ({"id": "ID", "action": "edit"}, 400, "needs its text"),
        ({"id": "ID", "action": "edit", "text": "   "}, 400, "needs its text"),
        ({"id": "ID", "action": "reject", "text": "x"}, 400, "for an edit"),
        ({"id": "ID", "action": "accept", "note": 3}, 400, "note"),
        ({"id": "ID", "action": "accept", "who": "mallory"}, 400, "who"),
        ({"id": "ID", "action": "accept", "note": "x" * 5000}, 400, "note"),
        (["ID"], 400, "valid"),
    ],
)
async def test_every_field_is_checked(
    client: TestClient[Any, Any], body: Any, status: int, message: str
) -> None:
    text = (await _texts(client))["texts"][0]
    if isinstance(body, dict) and body.get("id") == "ID":
        body = {**body, "id": text["id"]}
    answer = await client.post("/api/decision", json=body)
    assert answer.status == status
    assert message in (await answer.json())["error"]


async def test_bodies_that_are_not_json_or_too_large_are_refused(
    client: TestClient[Any, Any],
) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    answer = await client.post("/api/decision", data="id=x&action=reject", headers=form)
    assert answer.status == 400
    assert "JSON" in (await answer.json())["error"]
    answer = await client.post("/api/decision", data=b"{not json",
                               headers={"Content-Type": "application/json"})  # fmt: skip
    assert answer.status == 400
    big = orjson.dumps({"id": "x", "action": "edit", "text": "y" * 400_000})
    answer = await client.post("/api/decision", data=big,
                               headers={"Content-Type": "application/json"})  # fmt: skip
    assert answer.status == 413
    assert "error" in await answer.json()
    answer = await client.post("/api/label", json={"id": "nope", "preferred": "1", "note": ""})
    assert answer.status == 404
    answer = await client.post("/api/label", json={"id": "p001", "preferred": "A", "note": ""})
    assert answer.status == 400


async def test_the_page_is_served_escaped_with_security_headers(
    client: TestClient[Any, Any],
) -> None:
    answer = await client.get("/")
    assert answer.status == 200
    assert answer.content_type == "text/html"
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    html = await answer.text()
    assert "ada" in html
    # the page's one script is a file of its own: the policy allows no inline script
    script_src = answer.headers["Content-Security-Policy"].split("script-src ")[1].split(";")[0]
    assert script_src == "'self'"
    assert html.count("<script") == 1
    assert "<script src='/review.js'></script>" in html
    script = await client.get("/review.js")
    assert script.status == 200
    assert script.content_type == "text/javascript"
    assert script.headers["Content-Security-Policy"] == answer.headers["Content-Security-Policy"]
    assert "function listView(" in await script.text()


def test_a_missing_or_bad_run_is_one_error_line(tmp_path: Path) -> None:
    with pytest.raises(JudgeprobeError, match="no such directory"):
        make_app(tmp_path / "nothing", "ada")
    with pytest.raises(JudgeprobeError, match="not a run directory"):
        make_app(tmp_path, "ada")


async def _decide(run_dir: Path, *bodies: dict[str, Any]) -> dict[str, Any]:
    """Post decisions (``kind``/``condition`` pick the text) through the API; the texts."""
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
        found = await _texts(c)
        for body in bodies:
            text = _one(found, body.pop("kind"), body.pop("condition", None))
            answer = await c.post("/api/decision", json={"id": text["id"], **body})
            assert answer.status == 200, await answer.text()
        return found


def _rows(frame: pl.DataFrame, condition: str, item_id: str) -> pl.DataFrame:
    return frame.filter((pl.col("condition") == condition) & (pl.col("item_id") == item_id))


async def test_a_rejected_degraded_copy_leaves_the_metrics_and_the_card(run_dir: Path) -> None:
    note = "still true <script>alert(1)</script><img src=x onerror=alert(2)>"
    found = await _decide(run_dir, {"kind": "degraded", "action": "reject", "note": note})
    degraded = _one(found, "degraded")
    raw = load_judgments(RunDir(run_dir).judgments)
    gone = _rows(raw, "DegradedNumber", degraded["item_id"]).height
    assert gone > 0
    counted = load_run(run_dir).judgments
    assert counted.height == raw.height - gone
    assert _rows(counted, "DegradedNumber", degraded["item_id"]).is_empty()
    before = pl.read_csv(RunDir(run_dir).metrics).filter(pl.col("condition") == "DegradedNumber")
    assert metrics_main([str(run_dir), "--resamples", "50"]) == 0
    after = pl.read_csv(RunDir(run_dir).metrics).filter(pl.col("condition") == "DegradedNumber")
    assert after["n"].sum() == before["n"].sum() - gone
    card = card_for_run(run_dir, resamples=50)
    left = f"Rejected texts (1) leave {gone} judgment{'' if gone == 1 else 's'} out of every"
    assert any(left in r for r in card.review)
    md = RunDir(run_dir).card_md.read_text()
    assert "## Human review" in md
    assert "still true" in md
    report = run_report(load_run(run_dir), load_lexicons(None), resamples=50)
    assert "Human review of the generated texts" in report.with_suffix(".md").read_text()
    for page in (RunDir(run_dir).card_html, report):  # the note is the reviewer's: text
        html = page.read_text()
        assert "still true &lt;script&gt;alert(1)&lt;/script&gt;&lt;img" in html
        assert "<script>alert(1)" not in html
        assert "<img src=x" not in html


def test_an_edited_rewrite_is_judged_on_resume_under_a_new_key(
    run_dir: Path, made: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit = "Harrow & Finch ran a pilot of returnable glass bottles, and it was a pilot indeed."
    found = asyncio.run(
        _decide(
            run_dir,
            {"kind": "rewrite", "condition": "Verbosity", "action": "edit", "text": edit},
            {"kind": "degraded", "action": "reject", "note": "still true"},
        )
    )
    rewrite = _one(found, "rewrite", "Verbosity")
    before = _rows(load_judgments(RunDir(run_dir).judgments), "Verbosity", rewrite["item_id"])
    with FakeJudge() as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, made[1].parent / "items.jsonl",
                           conditions=CONDITIONS)  # fmt: skip
        args = ["--config", str(cfg), "--out", str(run_dir), "--no-progress", "--resume"]
        assert run(args) == 0
        assert judge.chat_requests == before.height  # the edited text's judgments, no other
    said = capsys.readouterr().err
    degraded = _one(found, "degraded")
    gone = _rows(load_judgments(RunDir(run_dir).judgments), "DegradedNumber", degraded["item_id"])
    assert f"{gone.height} of them show a text the review rejected (1 text)" in said
    assert "(most often: 1× still true)" in said
    after = load_judgments(RunDir(run_dir).judgments)
    edited = _rows(after, "Verbosity", rewrite["item_id"])
    assert edited.height == before.height
    assert set(edited["request_key"]).isdisjoint(before["request_key"])
    manifest = RunDir(run_dir).manifest()
    state = manifest.review
    assert state is not None
    assert (state.edit, state.reject) == (1, 1)
    assert state.edited_texts == [rewrite["id"]]
    # The new keys are the plan's for the edited text: what the judge was shown.
    config = load_config(cfg)
    items, conditions = reviewed(sweep_items(config), sweep_conditions(config),
                                 read_decisions(RunDir(run_dir)))  # fmt: skip
    prints = {j["name"]: j["fingerprint"] for j in manifest.judges}
    jobs = [j for j in cue_jobs(config, protocols_for(config), items, conditions, prints)
            if j.condition == "Verbosity" and j.item_id == rewrite["item_id"]]  # fmt: skip
    assert {j.key for j in jobs} == set(edited["request_key"])
    assert all(edit in (j.presentation.text_1 + j.presentation.text_2) for j in jobs)


async def test_labels_give_the_judges_kappa_in_the_report_and_card(run_dir: Path) -> None:
    choices = ["1", "2", "tie", "1", "2"]
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
        pairs = (await (await c.get("/api/pairs")).json())["pairs"]
        assert len(pairs) == 5
        for pair, choice in zip(pairs, choices, strict=True):
            body = {"id": pair["id"], "preferred": choice, "note": "<b>why</b>"}
            assert (await c.post("/api/label", json=body)).status == 200
        labelled = (await (await c.get("/api/pairs")).json())["progress"]["labelled"]
        assert labelled == 5
    # κ by hand: each labelled pair's label (the key unblinds it) against every Blind verdict.
    key = {r["pair_id"]: r for r in pl.read_csv(RunDir(run_dir).annotation_key).to_dicts()}
    screen = {"A": {"1": "A", "2": "B"}, "B": {"1": "B", "2": "A"}}
    judged = load_run(run_dir).judgments.filter(
        (pl.col("condition") == "Blind") & (pl.col("verdict") != "Invalid")
    )
    people, judge = [], []
    for pair, choice in zip(pairs, choices, strict=True):
        k = key[pair["id"]]
        label = "Tie" if choice == "tie" else screen[k["shown_first"]][choice]
        for verdict in judged.filter(pl.col("item_id").is_in(k["item_ids"].split(";")))["verdict"]:
            people.append(label)
            judge.append(verdict)
    expected = cohen_kappa_score(people, judge, labels=["A", "B", "Tie"])
    kappa, n_pairs, n_people = human_kappa(RunDir(run_dir), load_run(run_dir).judgments, 200, 0)
    assert (n_pairs, n_people) == (5, 1)
    (row,) = kappa.to_dicts()
    assert row["kappa"] == pytest.approx(expected)
    assert row["judgments"] == len(judge)
    assert row["lo"] <= row["kappa"] <= row["hi"]
    report = run_report(load_run(run_dir), load_lexicons(None), resamples=200)
    md = report.with_suffix(".md").read_text()
    assert "Human preference labels: agreement with the judge" in md
    assert f"{expected:.3f} [" in md
    card_for_run(run_dir, resamples=200)
    assert f"{expected:.3f} [" in RunDir(run_dir).card_md.read_text()


def test_annotate_reads_and_writes_the_same_store(run_dir: Path, tmp_path: Path) -> None:
    async def label_one() -> str:
        async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
            pair = (await (await c.get("/api/pairs")).json())["pairs"][0]["id"]
            body = {"id": pair, "preferred": "1", "note": ""}
            assert (await c.post("/api/label", json=body)).status == 200
            return str(pair)

    pair = asyncio.run(label_one())
    form = tmp_path / "labels-bo.csv"
    form.write_text(f"pair_id,annotator,label\n{pair},bo,2\n")
    assert annotate(["import", str(run_dir), str(form), "--resamples", "50"]) == 0
    with ReviewStore.of(RunDir(run_dir)) as store:
        found = {(x.who, x.origin) for x in store.labels(sample_id(RunDir(run_dir)))}
    assert found == {("ada", "review"), ("bo", "labels-bo.csv")}
    table = pl.read_csv(RunDir(run_dir).agreement)
    assert set(table.filter(pl.col("kind") == "annotator")["who"]) == {"ada", "bo"}


def test_the_command_says_one_line_for_a_bad_run_or_a_port_in_use(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review_cli([str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path / 'nothing'}: no such directory\n"
    (tmp_path / "empty").mkdir()
    assert review_cli([str(tmp_path / "empty")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert review_cli([str(run_dir), "--port", str(port), "--reviewer", "ada"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --port {port} on 127.0.0.1 is in use; choose another --port\n"
    assert review_cli([str(run_dir), "--port", "70000"]) == 2
    assert "--port must be 0 to 65535" in capsys.readouterr().err
    assert review_cli([str(run_dir), "--reviewer", " "]) == 2
    assert "--reviewer" in capsys.readouterr().err


def test_review_is_a_subcommand() -> None:
    assert COMMANDS["review"][0] == "judgeprobe.review.__main__"


def test_a_decision_survives_a_process_killed_without_closing(tmp_path: Path) -> None:
    """Every decision is its own committed transaction: nothing waits for a close."""
    code = (
        "import os, sys; from pathlib import Path; "
        "from judgeprobe.runs.review import Decision, ReviewStore; "
        "s = ReviewStore(Path(sys.argv[1])); "
        "s.decide(Decision(id='degraded:D:i', condition='D', item_id='i', action='reject', "
        "note='n', who='ada', when='t')); os._exit(9)"
    )
    path = tmp_path / "review.sqlite"
    done = subprocess.run([sys.executable, "-c", code, str(path)], cwd=ROOT, timeout=60)
    assert done.returncode == 9
    with ReviewStore(path) as store:
        (found,) = store.decisions().values()
    assert (found.action, found.who, found.note) == ("reject", "ada", "n")


def _decision(condition: str, item_id: str, action: Action, text: str | None = None) -> Decision:
    return Decision(id=f"x:{condition}:{item_id}", condition=condition, item_id=item_id,
                    action=action, text=text, who="ada", when="t")  # fmt: skip


def test_an_items_file_text_is_decided_for_its_item_in_every_condition(tmp_path: Path) -> None:
    cfg = SweepConfig(items=str(_items(tmp_path / "items.jsonl")), conditions=CONDITIONS, swap=0)
    prints = {j.name: "f" for j in cfg.judges}
    items, conditions = sweep_items(cfg), sweep_conditions(cfg)

    def keys(decisions: dict[str, Decision]) -> dict[tuple[str, str], str]:
        found, edited = reviewed(items, conditions, decisions)
        return {(j.condition, j.item_id): j.key
                for j in cue_jobs(cfg, protocols_for(cfg), found, edited, prints)}  # fmt: skip

    before = keys({})
    edit = _decision("", "x/eq_pair", "edit", "A second paraphrase, as the reviewer wrote it.")
    after = keys({edit.id: edit})
    changed = {cell for cell in before if before[cell] != after[cell]}
    # Every condition that shows the paraphrase is judged anew (DegradedNumber shows a copy of
    # candidate 1 beside itself, so nothing of it changes).
    assert changed == {(c, "x/eq_pair") for c in ("Blind", "Verbosity", "Injected")}
    frame = pl.DataFrame(
        [{"condition": c, "item_id": i} for c, i in before], schema={"condition": pl.String,
                                                                     "item_id": pl.String}
    )  # fmt: skip
    whole = _decision("", "x/eq_pair", "reject")
    one = _decision("Verbosity", "business-02", "reject")
    kept = without_rejected(frame, {whole.id: whole, one.id: one})
    cells = frame.filter(pl.col("item_id") == "x/eq_pair").height
    assert kept.height == frame.height - cells - 1
    assert kept.filter(pl.col("item_id") == "x/eq_pair").is_empty()
    assert kept.filter(pl.col("item_id") == "business-02").height == (
        frame.filter(pl.col("item_id") == "business-02").height - 1
    )


async def test_a_busy_store_is_a_json_503_and_stalls_no_other_request(
    client: TestClient[Any, Any], run_dir: Path
) -> None:
    text = (await _texts(client))["texts"][0]
    other = sqlite3.connect(RunDir(run_dir).review, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process (annotate, calibrate) is writing
    try:
        sent = asyncio.create_task(
            client.post("/api/decision", json={"id": text["id"], "action": "accept"})
        )
        await asyncio.sleep(0.1)
        # the decision waits for the lock in a thread: reads and the page still answer
        assert (await client.get("/api/texts")).status == 200
        assert (await client.get("/api/pairs")).status == 200
        assert (await client.get("/")).status == 200
        assert not sent.done()
        answer = await sent
        assert answer.status == 503
        assert answer.content_type == "application/json"
        assert "busy" in (await answer.json())["error"]
        assert answer.headers["Retry-After"] == "1"
        assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
        label = await client.post("/api/label", json={"id": "p001", "preferred": "1", "note": ""})
        assert label.status == 503
    finally:
        other.execute("ROLLBACK")
        other.close()
    answer = await client.post("/api/decision", json={"id": text["id"], "action": "accept"})
    assert answer.status == 200
    assert (await _texts(client))["progress"]["reviewed"] == 1


async def test_the_items_calibrate_drew_are_served_first(run_dir: Path) -> None:
    run = RunDir(run_dir)
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=3))) as c:
        before = await (await c.get("/api/pairs")).json()
    key = pl.read_csv(run.annotation_key)
    sampled = {i: r["pair_id"] for r in key.iter_rows(named=True) for i in r["item_ids"].split(";")}
    judged = set(load_judgments(run.judgments)["item_id"].to_list())
    assert calibrate(["calibrate", str(run_dir), "--draw", "4", "--seed", "5"]) == 0
    drawn = read_draw(run)
    assert len(drawn) == 4
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=3))) as c:
        listed = await (await c.get("/api/pairs")).json()
        ids = [p["id"] for p in listed["pairs"]]
        front = list(dict.fromkeys(sampled.get(d.item_id, d.pair_id) for d in drawn))
        assert ids[: len(front)] == front  # the drawn items first, in the draw's order
        assert {p["id"] for p in before["pairs"]} <= set(ids)  # the blind sample stays
        fresh = [d for d in drawn if d.item_id not in sampled]
        assert fresh, "the draw should reach beyond the blind sample"
        assert len(ids) == len(before["pairs"]) + len(fresh)
        for d in fresh:
            assert d.item_id not in str(listed)  # blind: no item id reaches the page
        first = ids[0]
        answer = await c.post("/api/label", json={"id": first, "preferred": "tie", "note": ""})
        assert answer.status == 200
        assert (await (await c.get("/api/pairs")).json())["progress"]["labelled"] == 1
    assert {d.item_id for d in drawn} <= judged


async def test_calibrate_reads_the_labels_given_on_the_page(run_dir: Path) -> None:
    async with TestClient(TestServer(make_app(run_dir, "ada", pairs_n=5))) as c:
        pairs = (await (await c.get("/api/pairs")).json())["pairs"]
        for pair, preferred in zip(pairs, ("1", "2", "tie", "1", "1"), strict=False):
            body = {"id": pair["id"], "preferred": preferred, "note": ""}
            assert (await c.post("/api/label", json=body)).status == 200
    assert calibrate(["calibrate", str(run_dir), "--halfwidth", "0.1"]) == 0
    table = pl.read_csv(RunDir(run_dir).calibrated)
    assert table.height >= 2
    assert (table["n_labels"] >= 4).all()
    assert table["calibrated"].is_not_null().all()
