"""The data set builder end to end against the fake judge: subsets, provenance, determinism,
resume, preservation flags, and a sweep on the built set."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import orjson
import polars as pl
import pytest

from judgeprobe import JudgeprobeError
from judgeprobe.candidates.assemble import BuildIncomplete, make_candidate_set
from judgeprobe.candidates.candidate_set import SET_VERSION
from judgeprobe.candidates.config import SUBSETS, CandidatesConfig
from judgeprobe.candidates.llm import Text
from judgeprobe.candidates.materials import Materials
from judgeprobe.candidates.subsets import document_rows
from judgeprobe.core.corpus import Document, load_items
from judgeprobe.engine.settings import JudgeConfig
from judgeprobe.runs.rundir import EXIT_INCOMPLETE
from judgeprobe.text import embeddings
from tests.conftest import ROOT, run_cli, write_config
from tests.fakeserver import FakeJudge

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="needs the embeddings extra")


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    """The fake judge, its generated texts varying with the seed (paraphrases must differ)."""
    with FakeJudge(seeded_texts=True) as judge:
        yield judge


ATTACK_SUBSETS = {f"attack_{a}_{m}" for a in ("verbosity", "confidence") for m in ("llm", "rule")}


def _cfg(judge: FakeJudge, **fields: Any) -> CandidatesConfig:
    return CandidatesConfig.model_validate(
        {
            "limit": 3,
            "min_tokens": 0,
            "author": JudgeConfig(name="fake", url=judge.url, concurrency=4),
            "engine": {"attempt_timeout_s": 5.0, "backoff_base_s": 0.01},
            **fields,
        }
    )


def test_every_subset_with_provenance_and_sweepable(tmp_path: Path, fake_judge: FakeJudge) -> None:
    stats = asyncio.run(make_candidate_set(_cfg(fake_judge), tmp_path / "set"))
    frame = pl.read_parquet(stats.path)
    per_doc = dict.fromkeys(ATTACK_SUBSETS, 1) | dict.fromkeys(SUBSETS, 1)
    per_doc |= {"llm_vs_extractive": 4, "single_relabel": 2}
    assert stats.subsets == {k: 3 * v for k, v in sorted(per_doc.items())}
    assert set(SUBSETS) | ATTACK_SUBSETS == set(frame["subset"])
    assert frame["item_id"].n_unique() == frame.height
    assert (frame["set_version"] == SET_VERSION).all()
    assert frame["model_fingerprint"].n_unique() == 1
    assert frame["source_hash"].str.len_chars().unique().to_list() == [64]

    extractive = frame.filter(pl.col("subset") == "llm_vs_extractive")
    methods = ("textrank", "lexrank", "klsum", "sumbasic")
    assert set(extractive["generator_2"]) == {f"sumy:{m}" for m in methods}
    assert set(extractive["generator_1"]) == {"llm:fake"}
    params = orjson.loads(extractive["params_1"][0])
    assert params["template"] == "summary_v1"
    assert params["temperature"] == 0.0
    same = frame.filter(pl.col("subset") == "same_model").row(0, named=True)
    seeds = [orjson.loads(same[f"params_{i}"])["seed"] for i in (1, 2)]
    assert seeds == [1, 2]
    assert orjson.loads(same["params_1"])["temperature"] > 0
    relabel = frame.filter(pl.col("subset") == "single_relabel").sort("item_id")
    assert relabel["candidate_1"][0] == relabel["candidate_1"][1]
    assert relabel["candidate_2"][0] == relabel["candidate_2"][1]
    labels = {(r["source_1"], r["source_2"]) for r in relabel.iter_rows(named=True)}
    assert labels == {("LLM", "TradML"), ("TradML", "LLM")}
    identical = frame.filter(pl.col("subset") == "identical")
    assert (identical["candidate_1"] == identical["candidate_2"]).all()
    rule = frame.filter(pl.col("subset") == "attack_verbosity_rule").row(0, named=True)
    assert rule["attack_target"] == "A"
    assert rule["preserved"]
    assert rule["similarity"] > 0.75
    assert rule["candidate_2"] in rule["candidate_1"]  # padded, original kept
    assert rule["base_item_id"] in set(identical["item_id"])
    # The summary's preserved LLM attacks ride on the rows it is candidate 1 of.
    llm_attack = frame.filter(pl.col("subset") == "attack_verbosity_llm").row(0, named=True)
    base = identical.filter(pl.col("item_id") == llm_attack["base_item_id"]).row(0, named=True)
    assert base["verbosity_1"] == llm_attack["candidate_1"]
    carriers = frame.filter(pl.col("verbosity_1").is_not_null())["subset"].unique().sort()
    assert carriers.to_list() == ["identical", "llm_vs_extractive", "single_relabel"]

    items = load_items(str(stats.path))
    assert len(items) == frame.height
    conditions = ["Blind", "True", "Flip"]
    cfg = write_config(tmp_path / "s.toml", fake_judge.url, stats.path, conditions=conditions)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    assert proc.returncode == 0, proc.stderr
    judged = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert judged.height == 3 * frame.height
    assert set(judged["subset"]) == set(frame["subset"])


def test_rebuild_is_byte_identical_and_resumes_from_the_store(
    tmp_path: Path, fake_judge: FakeJudge
) -> None:
    cfg = _cfg(fake_judge, limit=2)
    first = asyncio.run(make_candidate_set(cfg, tmp_path / "a"))
    sent = fake_judge.chat_requests
    again = asyncio.run(
        make_candidate_set(cfg, tmp_path / "a")
    )  # same store: nothing is sent again
    assert fake_judge.chat_requests == sent
    fresh = asyncio.run(make_candidate_set(cfg, tmp_path / "b"))  # new store, same inputs and seeds
    data = first.path.read_bytes()
    assert data == again.path.read_bytes() == fresh.path.read_bytes()
    other = asyncio.run(make_candidate_set(_cfg(fake_judge, limit=2, seed=5), tmp_path / "c"))
    assert other.path.read_bytes() != data  # the seeds are part of the provenance


def test_flagged_rewrites_are_left_out_unless_kept(tmp_path: Path, fake_judge: FakeJudge) -> None:
    strict: dict[str, Any] = {"limit": 1, "similarity_threshold": 1.0}
    strict |= {"attack_methods": ["rule"], "subsets": ["identical"]}
    dropped = asyncio.run(make_candidate_set(_cfg(fake_judge, **strict), tmp_path / "a"))
    assert dropped.flagged == 2
    assert dropped.subsets == {"identical": 1}
    kept = asyncio.run(
        make_candidate_set(_cfg(fake_judge, keep_flagged=True, **strict), tmp_path / "b")
    )
    frame = pl.read_parquet(kept.path).filter(pl.col("attack").is_not_null())
    assert frame.height == 2
    assert not frame["preserved"].any()
    assert all(f.startswith("similarity") for f in frame["flag"])


def test_length_filter_and_context_warning(tmp_path: Path, fake_judge: FakeJudge) -> None:
    corpus = tmp_path / "docs.jsonl"
    rows = [{"id": "short", "text": "Too short. " * 5}, {"id": "ok", "text": "Word here. " * 300}]
    corpus.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    limits = {"min_tokens": 100, "max_tokens": 1200, "judge_context": 600}
    cfg = _cfg(fake_judge, corpus=str(corpus), subsets=["identical"], attacks=[], **limits)
    stats = asyncio.run(make_candidate_set(cfg, tmp_path / "set"))
    assert stats.token_method.startswith("approximation")
    assert stats.dropped == {"short": 13}
    assert stats.documents == 1
    assert stats.over_context == ["ok/identical"]
    with pytest.raises(JudgeprobeError, match="no document is 2000-3000 tokens"):
        asyncio.run(
            make_candidate_set(_cfg(fake_judge, min_tokens=2000, max_tokens=3000), tmp_path / "x")
        )


def test_candidates_cli(tmp_path: Path, fake_judge: FakeJudge) -> None:
    out = tmp_path / "set"
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.candidates", "--author", f"fake={fake_judge.url}",
         "--limit", "1", "--min-tokens", "0", "--out", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "13 items from 1 documents" in proc.stderr
    built = orjson.loads((out / "build.json").read_bytes())
    assert built["items"] == 13
    assert built["config"]["author"]["name"] == "fake"


def test_single_relabel_falls_back_to_an_extractive_opponent_without_draws() -> None:
    doc = Document(id="d", text="A document.")
    summary = Text("The summary.", "llm:x")
    m = Materials(doc=doc, source_hash="h", summary=summary,
                  extractive={"textrank": Text("The lead.", "sumy:textrank")})  # fmt: skip
    cfg = CandidatesConfig(subsets=["single_relabel"], attacks=[])
    rows, flagged = document_rows(m, {}, "fp", cfg)
    assert flagged == 0
    assert [(r["source_1"], r["generator_2"]) for r in rows] == [
        ("LLM", "sumy:textrank"),
        ("TradML", "sumy:textrank"),
    ]
    assert all(r["candidate_2"] == "The lead." for r in rows)


def test_a_separate_paraphraser_writes_both_paraphrases(tmp_path: Path) -> None:
    with FakeJudge() as author, FakeJudge() as other:
        cfg = _cfg(author, limit=2, keep_flagged=True, subsets=["eq_pair"], attacks=[],
                   paraphraser=JudgeConfig(name="para", url=other.url, concurrency=2))  # fmt: skip
        stats = asyncio.run(make_candidate_set(cfg, tmp_path / "set"))
        asked = [b["messages"][0]["content"] for b in other.bodies]
        told = [b["messages"][0]["content"] for b in author.bodies]
    frame = pl.read_parquet(stats.path)
    assert frame.height == 2
    assert set(frame["subset"]) == {"eq_pair"}
    assert set(frame["generator_1"]) == set(frame["generator_2"]) == {"llm:para"}
    # This fake writes one text whatever the seed: two equal paraphrases are no pair.
    assert frame["flag"].str.contains("the two paraphrases are the same text").all()
    assert not frame["preserved"].any()
    assert asked  # both documents' summaries are one text here, so their requests may be one
    assert all("Paraphrase the summary" in p for p in asked)
    assert not any("Paraphrase the summary" in p for p in told)  # the author wrote the summary
    assert cfg.digest() != _cfg(author, limit=2, keep_flagged=True, subsets=["eq_pair"],
                                attacks=[]).digest()  # fmt: skip


def _stored(out: Path, table: str) -> int:
    """Rows of one table of a build's store, read while the build may still write it."""
    try:
        with closing(sqlite3.connect(out / "store.sqlite")) as db:
            return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    except sqlite3.OperationalError:  # no store, or no tables yet
        return 0


def _build_toml(path: Path, url: str, limit: int, **engine: float) -> list[str]:
    """A one-lane build config; returns the command that builds it (``--out`` to add)."""
    lines = [
        f"limit = {limit}",
        "min_tokens = 0",
        "[author]",
        'name = "fake"',
        f'url = "{url}"',
        "concurrency = 1",
        "[engine]",
        "attempt_timeout_s = 5.0",
        "backoff_base_s = 0.01",
    ]
    lines += [f"{k} = {v}" for k, v in engine.items()]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [sys.executable, "-m", "judgeprobe.candidates", "--config", str(path)]


def test_a_killed_build_resumes_without_losing_or_repeating_a_document(
    tmp_path: Path, fake_judge: FakeJudge
) -> None:
    one_lane = JudgeConfig(name="fake", url=fake_judge.url, concurrency=1)
    reference = asyncio.run(make_candidate_set(_cfg(fake_judge, limit=6, author=one_lane),
                                               tmp_path / "reference"))  # fmt: skip
    fake_judge.latency_s = 0.3  # slow enough to be killed between documents
    out = tmp_path / "killed"
    command = [*_build_toml(tmp_path / "b.toml", fake_judge.url, 6), "--out", str(out)]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while child.poll() is None and _stored(out, "outcomes") < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert child.poll() is None, "the build ended before it could be killed"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    written, answered = _stored(out, "outcomes"), _stored(out, "results")
    assert 2 <= written < 6
    assert not (out / "candidates.parquet").exists()

    time.sleep(0.5)  # a request the kill cut off is still counted once its latency is over
    fake_judge.latency_s = 0.0
    before = fake_judge.chat_requests
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    # Every stored request is reused and every missing one sent once: nothing lost, none twice.
    assert _stored(out, "results") == _stored(tmp_path / "reference", "results")
    assert fake_judge.chat_requests - before == _stored(out, "results") - answered
    assert _stored(out, "outcomes") == 6
    assert (out / "candidates.parquet").read_bytes() == reference.path.read_bytes()
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert again.returncode == 0, again.stderr
    assert fake_judge.chat_requests - before == _stored(out, "results") - answered


def test_the_sweep_deadline_stops_a_build_which_writes_no_set_and_exits_3(tmp_path: Path) -> None:
    with FakeJudge(seeded_texts=True, latency_s=0.4) as judge:
        command = _build_toml(tmp_path / "b.toml", judge.url, 3, sweep_deadline_s=1.0)
        proc = subprocess.run([*command, "--out", str(tmp_path / "set")], capture_output=True,
                              text=True, timeout=300, cwd=ROOT)  # fmt: skip
    assert proc.returncode == EXIT_INCOMPLETE, proc.stderr
    assert "sweep deadline (1s) reached: sending stopped" in proc.stderr
    said = proc.stderr.strip().splitlines()[-1]
    assert said.startswith("incomplete: ")
    assert "of 3 documents were not written (the sweep deadline (1s) stopped sending)" in said
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "set" / "candidates.parquet").exists()
    assert not (tmp_path / "set" / "build.json").exists()


def test_the_breaker_stops_an_author_whose_first_documents_all_fail(tmp_path: Path) -> None:
    # Every reply runs past its budget with no sentence to keep: each summary ends Invalid.
    with FakeJudge(seeded_texts=True, reply_tokens=400) as judge:
        one_lane = JudgeConfig(name="fake", url=judge.url, concurrency=1)
        engine = {"attempt_timeout_s": 5.0, "breaker_after": 2}
        cfg = _cfg(judge, limit=5, author=one_lane, engine=engine, subsets=["identical"])
        with pytest.raises(BuildIncomplete) as stopped:
            asyncio.run(make_candidate_set(cfg, tmp_path / "set"))
        sent = judge.chat_requests
    assert str(stopped.value).startswith(
        "3 of 5 documents were not written (author fake: circuit breaker: its first 2 "
        "documents were all Invalid (most often, 2×: no summary: "
    )
    assert "fix the author, then rerun the same command" in str(stopped.value)
    assert sent == 4  # the first two summaries, each asked again with a larger budget (cut)
    assert not (tmp_path / "set" / "candidates.parquet").exists()


def test_the_paraphraser_needs_its_own_name() -> None:
    """Both writers are addressed by name: one name would send both roles to one server."""
    author = JudgeConfig(name="w", url="http://127.0.0.1:1/v1")
    with pytest.raises(ValueError, match="a name other than the author's"):
        CandidatesConfig(
            author=author, paraphraser=author.model_copy(update={"url": "http://x/v1"})
        )
