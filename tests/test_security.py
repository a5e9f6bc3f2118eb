"""Credentials: the probe asks with the judge's key, a refusal names the variable and never
the key, a password in a judge URL reaches no message, file or key, and an unset
``api_key_env`` stops the run before anything is sent. Fake servers on loopback only."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.probe import server_info
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.protocols.replies import PairwiseReply
from tests.conftest import ROOT, make_items, toml_value
from tests.fakeserver import FakeJudge

URL_SECRET = "pw-URLSECRET-5150"
KEY_SECRET = "sk-KEYSECRET-8086"


def _run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JP_TEST_")}
    return subprocess.run(
        [sys.executable, "-m", "judgeprobe.run", "--no-progress", *args],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env={**environ, **(env or {})},
    )  # fmt: skip


def _config(path: Path, items: Path, judges: list[dict[str, str]]) -> Path:
    lines = [f"items = {toml_value(str(items))}", "[engine]", "attempt_timeout_s = 5.0"]
    for judge in judges:
        lines.append("[[judges]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in judge.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> str:
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def _forms(secret: str) -> list[str]:
    """A secret as it could leak: plain, and inside a Basic header."""
    return [secret, base64.b64encode(f"user:{secret}".encode()).decode()]


def _assert_nowhere(secrets: list[str], texts: list[str], run_dir: Path | None) -> None:
    for secret in secrets:
        for text in texts:
            assert secret not in text, f"{secret!r} leaked: {text[-2000:]}"
    if run_dir is None:
        return
    files = [p for p in run_dir.rglob("*") if p.is_file()]
    assert files, "the run wrote nothing"
    for path in files:
        data = path.read_bytes()
        for secret in secrets:
            assert secret.encode() not in data, f"{secret!r} leaked into {path}"


def test_probe_sends_the_judges_key(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge(api_key=KEY_SECRET) as judge:
        cfg = _config(
            tmp_path / "c.toml", items,
            [{"name": "keyed", "url": judge.url, "api_key_env": "JP_TEST_KEY"}],
        )  # fmt: skip
        proc = _run("--config", str(cfg), "--out", str(tmp_path / "run"),
                    env={"JP_TEST_KEY": KEY_SECRET})  # fmt: skip
        seen = list(judge.auth_seen)
    assert proc.returncode == 0, proc.stderr
    paths = {path for path, _ in seen}
    assert {"/v1/models", "/version", "/v1/chat/completions"} <= paths
    assert {auth for _, auth in seen} == {f"Bearer {KEY_SECRET}"}  # the probe's asks included
    _assert_nowhere([KEY_SECRET], [proc.stdout, proc.stderr], tmp_path / "run")


def test_refused_key_names_the_variable_not_the_key(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge(api_key="the-right-key") as judge:  # its 401 echoes what it was shown
        cfg = _config(
            tmp_path / "c.toml", items,
            [{"name": "keyed", "url": judge.url, "api_key_env": "JP_TEST_KEY"}],
        )  # fmt: skip
        proc = _run("--config", str(cfg), "--out", str(tmp_path / "run"),
                    env={"JP_TEST_KEY": KEY_SECRET})  # fmt: skip
    _one_line_error(proc, "keyed", "refused the API key from $JP_TEST_KEY", "401")
    _assert_nowhere([KEY_SECRET], [proc.stdout, proc.stderr], None)
    assert not (tmp_path / "run").exists()


def test_refused_url_credentials_are_not_printed(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge(basic="user:the-right-password") as judge:
        url = judge.url.replace("http://", f"http://user:{URL_SECRET}@")
        cfg = _config(tmp_path / "c.toml", items, [{"name": "basic", "url": judge.url}])
        proc = _run("--config", str(cfg), "--judge", f"basic={url}",
                    "--out", str(tmp_path / "run"))  # fmt: skip
    _one_line_error(proc, "refused the credentials in its URL", judge.url)
    _assert_nowhere(_forms(URL_SECRET), [proc.stdout, proc.stderr], None)


def test_secrets_in_url_and_key_reach_no_output(tmp_path: Path) -> None:
    """A whole run with one judge behind Basic auth in its URL and one behind a key: the
    servers get their credentials, and neither secret is in any file, stdout or stderr."""
    items = make_items(tmp_path / "i.jsonl", 2)
    run_dir = tmp_path / "run"
    with (
        FakeJudge(basic=f"user:{URL_SECRET}") as basic,
        FakeJudge(api_key=KEY_SECRET) as keyed,
    ):
        cfg = _config(
            tmp_path / "c.toml", items,
            [{"name": "basic", "url": basic.url},
             {"name": "keyed", "url": keyed.url, "api_key_env": "JP_TEST_KEY"}],
        )  # fmt: skip
        secret_url = basic.url.replace("http://", f"http://user:{URL_SECRET}@")
        proc = _run(
            "--config", str(cfg), "--judge", f"basic={secret_url}",
            "--judge", f"keyed={keyed.url}", "--out", str(run_dir),
            env={"JP_TEST_KEY": KEY_SECRET},
        )  # fmt: skip
        basic_seen, keyed_seen = list(basic.auth_seen), list(keyed.auth_seen)
        # A resume from the same flags works too (the credentials are sent again).
        again = _run(
            "--config", str(cfg), "--judge", f"basic={secret_url}",
            "--judge", f"keyed={keyed.url}", "--out", str(run_dir), "--resume",
            env={"JP_TEST_KEY": KEY_SECRET},
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert {a for _, a in basic_seen} == {basic.expected_auth}
    assert {a for _, a in keyed_seen} == {keyed.expected_auth}
    assert basic.url in proc.stderr  # the public URL is shown
    assert (run_dir / "report.html").is_file()
    assert (run_dir / "store.sqlite").is_file()
    _assert_nowhere([*_forms(URL_SECRET), KEY_SECRET], [proc.stdout, proc.stderr], run_dir)
    assert again.returncode == 0, again.stderr
    _assert_nowhere([*_forms(URL_SECRET), KEY_SECRET], [again.stdout, again.stderr], run_dir)


@pytest.mark.parametrize(
    "flag",
    [
        f"bad name=http://user:{URL_SECRET}@127.0.0.1:9/v1",
        f"x=ftp://user:{URL_SECRET}@127.0.0.1:9/v1",
        f"x=http://user:{URL_SECRET}@127.0.0.1:9/v1,http://user:{URL_SECRET}@127.0.0.1:9/v1",
        f"no-equals-http://user:{URL_SECRET}@127.0.0.1:9/v1",
    ],
)
def test_flag_errors_scrub_url_credentials(tmp_path: Path, flag: str) -> None:
    proc = _run("--judge", flag, "--out", str(tmp_path / "run"))
    _one_line_error(proc, "***@")
    _assert_nowhere([URL_SECRET], [proc.stdout, proc.stderr], None)


def test_unset_api_key_env_stops_before_anything_is_sent(tmp_path: Path) -> None:
    items = make_items(tmp_path / "i.jsonl", 2)
    with FakeJudge() as open_judge, FakeJudge() as keyed:
        cfg = _config(
            tmp_path / "c.toml", items,
            [{"name": "open", "url": open_judge.url},
             {"name": "keyed", "url": keyed.url, "api_key_env": "JP_TEST_UNSET"}],
        )  # fmt: skip
        proc = _run("--config", str(cfg), "--out", str(tmp_path / "run"))
        asked = open_judge.auth_seen + keyed.auth_seen
    _one_line_error(proc, "keyed", "JP_TEST_UNSET", "not set")
    assert asked == []  # not even the other judge's probe
    assert not (tmp_path / "run").exists()


def test_echoed_credentials_are_redacted_from_stored_reasons(tmp_path: Path) -> None:
    """A server that echoes the refused key in its error text: the stored reason hides it."""
    os.environ["JP_TEST_ECHO"] = KEY_SECRET
    try:
        judge = JudgeConfig(name="echo", url="http://127.0.0.1:9/v1", api_key_env="JP_TEST_ECHO")
        with FakeJudge(api_key="another-key") as server:
            judge = judge.model_copy(update={"url": server.url})
            result = asyncio.run(_ask_once(judge))
    finally:
        del os.environ["JP_TEST_ECHO"]
    assert result.status == "invalid"
    assert "HTTP 401" in result.invalid_reason
    assert "invalid credentials: ***" in result.invalid_reason
    assert KEY_SECRET not in result.model_dump_json()


async def _ask_once(judge: JudgeConfig):  # type: ignore[no-untyped-def]
    endpoint = Endpoint(judge, EngineConfig(max_attempts=1), server_info("vllm", "fake-judge", {}))
    try:
        return await endpoint.execute(
            Request(
                endpoint="echo",
                messages=({"role": "user", "content": "judge"},),
                schema_name="pairwise",
                schema=PairwiseReply.model_json_schema(),
                reply_model=PairwiseReply,
                sampling=Sampling(),
                seed=0,
                fingerprint="f",
            )
        )
    finally:
        await endpoint.close()
