"""Bad input gets one clear line on stderr, a non-zero exit, and nothing half-written."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _assert_one_line_error(proc_stderr: str, returncode: int, *needles: str) -> None:
    lines = [line for line in proc_stderr.strip().splitlines() if line.strip()]
    assert returncode == 2, proc_stderr
    assert len(lines) == 1, proc_stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc_stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_unknown_condition(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items, conditions=["Blind", "Bogus"])
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "Bogus", "Placebo")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("items = [unclosed", "not valid TOML"),
        ('order = "sideways"', "order"),
        ("seeds = []", "seeds"),
        ("surprise = 1", "surprise"),
        ('[[judges]]\nname = "x"\nurl = "ftp://nope"', "url"),
        ('[cues.Odd]\nlabel_1 = "{nope}"', "placeholders"),
    ],
)
def test_malformed_config(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(text + "\n")
    if "cues.Odd" in text:
        cfg.write_text('conditions = ["Blind", "Odd"]\n' + text + "\n")
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, needle)
    assert not (tmp_path / "run").exists()


def test_missing_items_file(tmp_path: Path, fake_judge: FakeJudge) -> None:
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, tmp_path / "absent.jsonl")
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "absent.jsonl")


def test_malformed_items_row(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = tmp_path / "i.jsonl"
    items.write_text('{"item_id": "a", "document": "d", "candidate_1": "x"}\n')
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "row 1", "candidate_2")


def test_unreachable_url_names_url_and_make_target(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    proc = run_cli("--judge", f"gemma3-270m={url}", "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, url, "make serve-gemma")
    assert not (tmp_path / "run").exists()


def test_bad_judge_flag(tmp_path: Path) -> None:
    proc = run_cli("--judge", "no-equals-sign", "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "NAME=URL")


def test_nonconforming_server_is_refused(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge(nonconforming=True) as judge:
        cfg = write_config(tmp_path / "c.toml", judge.url, items)
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    _assert_one_line_error(proc.stderr, proc.returncode, "structured-output check", "schema")
    assert not (tmp_path / "run").exists()


def test_existing_run_needs_resume_and_same_config(tmp_path: Path, fake_judge: FakeJudge) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = write_config(tmp_path / "c.toml", fake_judge.url, items)
    out = tmp_path / "run"
    assert run_cli("--config", str(cfg), "--out", str(out)).returncode == 0
    again = run_cli("--config", str(cfg), "--out", str(out))
    _assert_one_line_error(again.stderr, again.returncode, "--resume")
    other = write_config(tmp_path / "c2.toml", fake_judge.url, items, seeds=[1])
    changed = run_cli("--config", str(other), "--out", str(out), "--resume")
    _assert_one_line_error(changed.stderr, changed.returncode, "different config")
    resumed = run_cli("--config", str(cfg), "--out", str(out), "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert "reused 8" in resumed.stderr


def test_metrics_cli_bad_file(tmp_path: Path) -> None:
    import subprocess
    import sys

    bad = tmp_path / "x.parquet"
    bad.write_text("not parquet")
    proc = subprocess.run(
        [sys.executable, "-m", "judgeprobe.metrics", str(bad)], capture_output=True, text=True
    )
    _assert_one_line_error(proc.stderr, proc.returncode, "Parquet")
