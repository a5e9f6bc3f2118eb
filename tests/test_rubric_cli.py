"""``python -m judgeprobe.rubric`` end to end: on the fake judge (plumbing, resume, LLM
rewrites, the paper preset, the combined report), on a labelled file, on bad input, and on
the real embedded judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import polars as pl
import pytest

from tests.conftest import ROOT, make_items, run_cli, write_config
from tests.fakeserver import FakeJudge


def rubric_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.rubric", "--no-progress", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )


def _one_line_error(proc: subprocess.CompletedProcess[str], needle: str) -> None:
    lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    assert needle in lines[0], proc.stderr


def test_bundled_sample_on_the_fake_judge_then_resume(
    fake_judge: FakeJudge, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = f"--judge fake={fake_judge.url} --limit 6 --out {out} --classifiers tfidf".split()
    args += ["--resamples", "100"]
    proc = rubric_cli(*args)
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(out / "rubric" / "judgments.parquet")
    assert j.height == 6 * 3
    assert sorted(j["variant"].unique()) == ["negated_criterion", "original", "reversed_response"]
    assert set(j["verdict"]) <= {"satisfied", "violated"}
    negated = j.filter(pl.col("variant") == "negated_criterion")
    assert (negated["criterion_used"] != negated["criterion"]).all()
    transitions = pl.read_csv(out / "rubric" / "transitions.csv")
    assert set(transitions["perturbation"]) == {"response", "criterion"}
    assert set(transitions["valid_pairs"]) == {6}
    # The fake judge always says "met": one label only, so the classifier step says why not.
    assert "skipped" in (out / "rubric" / "notes.txt").read_text()
    page = (out / "report.html").read_text()
    assert "Counterfactual perturbation" in page
    manifest = orjson.loads((out / "rubric" / "manifest.json").read_bytes())
    assert manifest["items"]["n"] == 6
    assert manifest["sampling"]["temperature"] == 0.0

    sent = fake_judge.chat_requests
    again = rubric_cli(*args)
    assert again.returncode != 0
    assert "--resume" in again.stderr  # no silent overwrite
    resumed = rubric_cli(*args, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert fake_judge.chat_requests == sent  # everything came from the store
    assert "sent 0, reused 18" in resumed.stderr


def test_llm_rewrites_and_the_paper_preset(fake_judge: FakeJudge, tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = "--reversal llm --negation llm --preset paper --seeds 0,1 --classifiers tfidf"
    proc = rubric_cli(*f"--judge fake={fake_judge.url} --limit 2 --out {out} {flags}".split())
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(out / "rubric" / "judgments.parquet")
    assert j.height == 2 * 3 * 2
    rewritten = j.filter(pl.col("variant") != "original")
    assert (rewritten["counterfactual"] == "Summary text compared.").all()  # the fake's text
    assert set(rewritten["source"]) == {"llm"}
    assert fake_judge.bodies, "no request reached the fake judge"
    for body in fake_judge.bodies:
        assert (body["temperature"], body["top_p"]) == (1.0, 0.95)
        assert body["repetition_penalty"] == 1.15  # vLLM's name (the fake looks like vLLM)


def test_rubric_section_joins_the_cue_report(fake_judge: FakeJudge, tmp_path: Path) -> None:
    out = tmp_path / "run"
    items = make_items(tmp_path / "items.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items, conditions=["Blind", "True"])
    assert run_cli("--config", str(cfg), "--out", str(out)).returncode == 0
    flags = "--perturb criterion --negation rule --resamples 50"
    proc = rubric_cli(*f"--judge fake={fake_judge.url} --limit 3 --out {out} {flags}".split())
    assert proc.returncode == 0, proc.stderr
    page = (out / "report.html").read_text()
    assert "Outcome anchoring" in page
    assert "Counterfactual perturbation" in page


def test_labels_only_on_a_user_file(tmp_path: Path) -> None:
    rows = []
    for i in range(60):
        met = i % 3 == 0
        verb = "Recommends" if met else "Omits"
        rows.append(
            {
                "prompt_id": f"p{i}",
                "prompt": [{"role": "user", "content": "Q?"}],
                "completion": "A.",
                "rubric": f"{verb} point {i % 7}.",
                "judge_label": met,
                "split": "xy"[i % 2],
            }
        )
    path = tmp_path / "labelled.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    out = tmp_path / "run"
    flags = "--labels-only --classifiers tfidf --resamples 200"
    proc = rubric_cli(*f"--items {path} --out {out} {flags}".split())
    assert proc.returncode == 0, proc.stderr
    m = pl.read_csv(out / "rubric" / "classifier_metrics.csv")
    acc = m.filter((pl.col("cohort") == "standard") & (pl.col("metric") == "accuracy"))
    assert acc["value"].item() > 0.9
    assert pl.read_csv(out / "rubric" / "transfer.csv").height == 4
    page = (out / "report.html").read_text()
    assert "rubric_confusion" in page
    assert "cues in the wording" in page


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--items", "/nonexistent.jsonl"], "no such file"),
        (["--seeds", "a,b"], "--seeds"),
        (["--perturb", "everything"], "perturbations"),
        (["--classifiers", "forest"], "classifiers"),
        (["--classifiers", "transformer"], "--transformer DIR"),
        (["--labels-only"], "judge_label"),
        (["--judge", "nourl"], "NAME=URL"),
        (["--limit", "-1"], "limit"),
    ],
)
def test_bad_command_lines(tmp_path: Path, args: list[str], needle: str) -> None:
    out = tmp_path / "run"
    _one_line_error(rubric_cli(*args, "--out", str(out)), needle)
    assert not out.exists()


def test_unreachable_judge_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = rubric_cli(
        "--judge", "gemma3-270m=http://127.0.0.1:9/v1", "--limit", "2", "--out", str(out)
    )
    _one_line_error(proc, "cannot reach")
    assert not out.exists()


def test_items_without_provided_counterfactuals(tmp_path: Path, fake_judge: FakeJudge) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_bytes(orjson.dumps({"prompt": "Q?", "response": "A.", "criterion": "Says A."}))
    proc = rubric_cli(
        "--items", str(path), "--judge", f"fake={fake_judge.url}", "--out", str(tmp_path / "run")
    )
    _one_line_error(proc, "--reversal llm")


@pytest.mark.embedded
def test_bundled_sample_on_the_real_embedded_judge(embedded_judge: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    flags = f"--limit 3 --out {out} --classifiers tfidf --resamples 200".split()
    proc = rubric_cli("--judge", f"gemma3-270m={embedded_judge}", *flags, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    j = pl.read_parquet(out / "rubric" / "judgments.parquet")
    assert j.height == 3 * 3
    valid = j.filter(pl.col("verdict") != "Invalid")
    assert valid.height > 0, j.select("invalid_reason")
    assert set(valid["verdict"]) <= {"satisfied", "violated"}
    assert (valid["explanation"].str.len_chars() > 0).all()
    assert (valid["prompt_tokens"] > 50).all()  # a real tokenizer counted a real prompt
    invalid = j.filter(pl.col("verdict") == "Invalid")
    assert (invalid["invalid_reason"].str.len_chars() > 0).all()
    transitions = pl.read_csv(out / "rubric" / "transitions.csv")
    for (_,), part in transitions.group_by(["perturbation"]):
        assert part["count"].sum() == part["valid_pairs"][0]  # transitions partition valid pairs
    assert (out / "report.html").is_file()


def test_config_file(tmp_path: Path, fake_judge: FakeJudge) -> None:
    cfg = tmp_path / "rubric.toml"
    cfg.write_text(
        'name = "mine"\nlimit = 2\npreset = "paper"\nseeds = [3]\nperturbations = ["criterion"]\n'
        'negation = "rule"\nclassifiers = ["tfidf"]\nresamples = 50\n\n[[judges]]\n'
        f'name = "fake"\nurl = "{fake_judge.url}"\n',
        encoding="utf-8",
    )
    out = tmp_path / "run"
    assert rubric_cli("--config", str(cfg), "--out", str(out)).returncode == 0
    j = pl.read_parquet(out / "rubric" / "judgments.parquet")
    assert j.height == 2 * 2
    assert set(j["seed"]) == {3}
    negated = j.filter(pl.col("variant") == "negated_criterion")
    assert negated["criterion_used"].str.starts_with("Does not ").all()
    bad = tmp_path / "bad.toml"
    bad.write_text("bogus = 1\n", encoding="utf-8")
    _one_line_error(rubric_cli("--config", str(bad), "--out", str(tmp_path / "r2")), "bogus")


def test_python_api(fake_judge: FakeJudge, tmp_path: Path) -> None:
    import asyncio

    from rich.console import Console

    from judgeprobe.rubric import RubricConfig, analyse, judge_all, labels_from, load_rubric_items

    cfg = RubricConfig.model_validate(
        {
            "limit": 2,
            "resamples": 20,
            "classifiers": ["tfidf"],
            "judges": [{"name": "fake", "url": fake_judge.url}],
        }
    )
    items = load_rubric_items(cfg.items, cfg.limit)
    folder = tmp_path / "rubric"
    judgments, summary = asyncio.run(judge_all(cfg, items, folder, Console(), progress=False))
    assert judgments.height == 6
    assert summary.sent == 6
    tables = analyse(folder, judgments, labels_from(judgments), cfg, notes=[])
    assert set(tables["transitions"]["perturbation"]) == {"response", "criterion"}
    assert (folder / "transitions.csv").is_file()
    assert (folder / "labels.parquet").is_file()
