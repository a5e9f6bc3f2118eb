"""A judge exactly as its users run it: the start-up probe asks only for what the sweep sends."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tests.conftest import make_items, run_cli, write_config
from tests.fakeserver import FakeJudge

PAIR_VERDICT = '{ pattern = \'\\[\\[(A|B|C)\\]\\]\', map = { A = "1", B = "2", C = "tie" } }'
PAIR_PROMPT = "Q: {CONTEXT}\nA: {RESPONSE_1}\nB: {RESPONSE_2}\nEnd with [[A]], [[B]] or [[C]].\n"


def _judge_config(tmp_path: Path, url: str, judge: str, protocols: list[str]) -> Path:
    """A sweep of three items and two conditions against one judge given as TOML lines."""
    items = make_items(tmp_path / "i.jsonl", 3)
    cfg = write_config(tmp_path / "c.toml", url, items, protocols=protocols,
                       conditions=["Blind", "True"])  # fmt: skip
    head = cfg.read_text().split("[[judges]]")[0]
    cfg.write_text(f'{head}[[judges]]\nname = "mine"\nurl = "{url}"\n{judge}')
    return cfg


def _pattern_judge(tmp_path: Path) -> str:
    (tmp_path / "p.txt").write_text(PAIR_PROMPT)
    return f'prompt = "{tmp_path / "p.txt"}"\nverdict = {PAIR_VERDICT}\n'


def test_a_text_judge_on_a_server_without_structured_output_is_audited(tmp_path: Path) -> None:
    """The server drops response_format: a pattern verdict needs none, so the sweep runs."""
    with FakeJudge(ignore_schema=True, free_text="A reads better.\n[[A]]") as judge:
        cfg = _judge_config(tmp_path, judge.url, _pattern_judge(tmp_path), ["own"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        sent = judge.bodies
    assert proc.returncode in (0, 4), proc.stderr
    assert "structured-output" not in proc.stderr
    frame = pl.read_parquet(tmp_path / "run" / "judgments.parquet")
    assert frame.height == 6
    assert set(frame["raw_verdict"]) == {"[1,2]"}
    assert all("response_format" not in body for body in sent)  # the probe sent none either


def test_a_judge_that_will_be_sent_a_schema_is_still_checked(tmp_path: Path) -> None:
    """The same server is refused in one line once a built-in protocol or a JSON verdict
    would send it a schema it does not enforce; nothing is written."""
    json_verdict = '{ json = "winner", map = { A = "1", B = "2" } }'
    (tmp_path / "p.txt").write_text(PAIR_PROMPT)
    for judge, protocols in (
        (_pattern_judge(tmp_path), ["own", "baseline"]),
        (f'prompt = "{tmp_path / "p.txt"}"\nverdict = {json_verdict}\n', ["own"]),
    ):
        with FakeJudge(ignore_schema=True, free_text='{"winner": "A"}') as fake:
            cfg = _judge_config(tmp_path, fake.url, judge, protocols)
            proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
        lines = proc.stderr.strip().splitlines()
        assert proc.returncode == 2, proc.stderr
        assert len(lines) == 1, proc.stderr
        assert "structured-output check" in lines[0]
        assert "enforce" in lines[0]
        assert not (tmp_path / "run").exists()


def test_a_text_judge_whose_server_gives_no_reply_is_one_line(tmp_path: Path) -> None:
    with FakeJudge(ignore_schema=True, free_text="   ") as judge:
        cfg = _judge_config(tmp_path, judge.url, _pattern_judge(tmp_path), ["own"])
        proc = run_cli("--config", str(cfg), "--out", str(tmp_path / "run"))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert "no usable reply" in lines[0]
    assert "empty reply" in lines[0]
    assert not (tmp_path / "run").exists()
