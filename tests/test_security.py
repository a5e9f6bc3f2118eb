"""Credentials: the probe asks with the judge's key, a refusal names the variable and never
the key, a password in a judge URL reaches no message, file or key, and an unset
``api_key_env`` stops the run before anything is sent. Fake servers on loopback only.

Hostile text: markup in a judge's reply, an item id, a condition name, a label or a manifest
field runs nothing on any page (the raw text, and the DOM in headless Chromium) and breaks no
Markdown table."""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import orjson
import polars as pl
import pytest

from judgeprobe.annotate.form import render_form
from judgeprobe.card.__main__ import main as card_main
from judgeprobe.compare.entry import compare
from judgeprobe.engine.client import Endpoint
from judgeprobe.engine.probe import server_info
from judgeprobe.engine.request import Request, Sampling
from judgeprobe.engine.settings import EngineConfig, JudgeConfig
from judgeprobe.metrics.load import load_run
from judgeprobe.protocols.replies import PairwiseReply
from judgeprobe.render import templating
from judgeprobe.render.page import Section, render
from judgeprobe.report.run import run_report
from judgeprobe.runs.rundir import RunDir
from judgeprobe.text.lexicons import load_lexicons
from tests import chromium
from tests.conftest import (
    ROOT,
    make_items,
    review_server,
    run_cli,
    toml_value,
    town_items,
    write_config,
)
from tests.fakeserver import FakeJudge
from tests.reportdata import rows, run_dir, table

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


def _keyed_sweep(tmp_path: Path, judge: FakeJudge) -> subprocess.CompletedProcess[str]:
    """A sweep of judge ``keyed`` at ``judge``, its key in $JP_TEST_KEY (``KEY_SECRET``)."""
    items = make_items(tmp_path / "i.jsonl", 2)
    cfg = _config(
        tmp_path / "c.toml", items,
        [{"name": "keyed", "url": judge.url, "api_key_env": "JP_TEST_KEY"}],
    )  # fmt: skip
    return _run("--config", str(cfg), "--out", str(tmp_path / "run"),
                env={"JP_TEST_KEY": KEY_SECRET})  # fmt: skip


def test_probe_sends_the_judges_key(tmp_path: Path) -> None:
    with FakeJudge(api_key=KEY_SECRET) as judge:
        proc = _keyed_sweep(tmp_path, judge)
        seen = list(judge.auth_seen)
    assert proc.returncode == 0, proc.stderr
    paths = {path for path, _ in seen}
    assert {"/v1/models", "/version", "/v1/chat/completions"} <= paths
    assert {auth for _, auth in seen} == {f"Bearer {KEY_SECRET}"}  # the probe's asks included
    _assert_nowhere([KEY_SECRET], [proc.stdout, proc.stderr], tmp_path / "run")


def test_refused_key_names_the_variable_not_the_key(tmp_path: Path) -> None:
    with FakeJudge(api_key="the-right-key") as judge:  # its 401 echoes what it was shown
        proc = _keyed_sweep(tmp_path, judge)
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


# Hostile text on every page: what a judge answers, an item id, a condition name, a label, a
# manifest field and a degraded copy's recorded change all carry markup that would run if a page
# let it through. Every page must show it as text.
HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "' onmouseover='alert(1)' x='",  # out of a single-quoted attribute
    "</script><script>alert(1)</script>",  # out of a script element holding data
]
MARKDOWN_HOSTILE = "a | b\nc `d` \\| e"  # a column, a line, a code span, an escape
JUDGE = f"judge|{HOSTILE[3]}"  # in every table's first column
RAN = "window.__ran"
TRAP = (f"{RAN} = []; for (const f of ['alert', 'confirm', 'prompt']) "
        f"window[f] = (m) => {RAN}.push(f + ':' + m);")  # fmt: skip
"""Any dialog a payload could open is recorded in ``window.__ran`` instead."""
SAFE_ATTRIBUTES = {"lang", "charset", "class", "id", "type", "alt", "src", "size", "required",
                   "hidden", "value", "placeholder", "role", "rel", "href"}  # fmt: skip
"""The attributes the templates write; a payload that broke out would add others."""


def _hostile_run(path: Path) -> Path:
    """A hand-made run directory whose every untrusted field carries hostile markup."""
    blind = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2
    cued = ["A"] * 8 + blind[8:19] + ["Invalid"]
    cue = f"True{HOSTILE[1]}"
    # The judge answers with markup under baseline; under PBP with text that names no label,
    # so its moves are silent and listed in the card's Markdown table.
    explanations = {
        "baseline": [HOSTILE[i % len(HOSTILE)] for i in range(len(cued))],
        "pbp": [MARKDOWN_HOSTILE] * len(cued),
    }
    quotes = [{"quote": h, "source": h, "match": 0.5, "fabricated": True} for h in HOSTILE]
    details = orjson.dumps({"notes": {HOSTILE[2]: {HOSTILE[3]: {"quotes": quotes}}}}).decode()
    cue_rows = [
        rows(cued, cue, protocol=protocol, target="A", label_1=HOSTILE[0], label_2=HOSTILE[2],
             attack=HOSTILE[3], invalid_reason=HOSTILE[4],
             details=details if protocol == "baseline" else "")
        for protocol in explanations
    ]  # fmt: skip
    for part in cue_rows:
        for r, text in zip(part, explanations[part[0]["protocol"]], strict=True):
            r["explanation"] = text
    frame = table(
        rows(blind),
        rows(blind, protocol="pbp"),
        *cue_rows,
        rows(blind[:10], "DegradedNumber", degraded="B"),
    ).with_columns(
        item_id=pl.format("{}{}", "item_id", pl.lit(HOSTILE[2])),
        judge=pl.lit(JUDGE),
    )
    run = run_dir(path, frame)
    manifest = orjson.loads((run / "manifest.json").read_bytes())
    manifest["run_id"] = f"run{HOSTILE[0]}"
    manifest["judges"] = [{"name": JUDGE, "model": HOSTILE[1], "backend": HOSTILE[2]}]
    (run / "manifest.json").write_bytes(orjson.dumps(manifest))
    checks = {"condition": ["DegradedNumber"] * 20, "kind": [HOSTILE[3]] * 20,
              "item_id": frame.filter(pl.col("condition") == "DegradedNumber")["item_id"].to_list()
              * 2, "degraded": ["B"] * 20, "before": [HOSTILE[0]] * 20,
              "after": [HOSTILE[1]] * 20}  # fmt: skip
    pl.DataFrame(checks).write_csv(run / "degrade_checks.csv")
    return run


def hostile_pages(tmp_path: Path) -> dict[str, tuple[Path, int]]:
    """Every page judgeprobe writes, from hostile input: path, and the scripts it should hold."""
    run = _hostile_run(tmp_path / "run")
    run_report(load_run(run), load_lexicons(None), resamples=50)
    assert card_main([str(run), "--resamples", "50"]) in (0, 5, 6, 7)
    form = tmp_path / "form.html"
    pair = {"pair_id": HOSTILE[1], "document": HOSTILE[4], "summary_1": HOSTILE[0],
            "summary_2": HOSTILE[2]}  # fmt: skip
    form.write_text(render_form([pair], "0123abcd"), encoding="utf-8")
    # The rubric report and any future page share render(): every field of a section.
    section = Section(HOSTILE[0], HOSTILE[1], [("chart", HOSTILE[2])],
                      [pl.DataFrame({HOSTILE[3]: [HOSTILE[4]]})], [HOSTILE[0]])  # fmt: skip
    _, page = render(RunDir(tmp_path), HOSTILE[4], [HOSTILE[2]], [section])
    generic = tmp_path / "page.html"
    generic.write_text(page, encoding="utf-8")
    # The review page as its server renders it (its data comes later, by fetch: see
    # test_a_hostile_run_runs_nothing_on_any_page); opened from a file, its fetch fails.
    review = tmp_path / "review.html"
    review.write_text(templating.page("review.html.j2", run_id=HOSTILE[0], reviewer=HOSTILE[4]),
                      encoding="utf-8")  # fmt: skip
    compared = tmp_path / "compared"  # the hostile run against itself: every name shown
    compare([run, run], out=compared)
    return {
        "report": (run / "report.html", 1),  # the evidence browser's filters
        "card": (run / "card.html", 0),
        "compare": (compared / "compare.html", 0),
        "annotation form": (form, 3),  # its data, its CSV writer, its page script
        "section page": (generic, 0),
        "review page": (review, 1),
    }


class _Markup(HTMLParser):
    """The elements and attributes a browser would build from a page's text, and its text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _assert_inert_text(name: str, text: str, scripts: int) -> None:
    """Parsed as a browser would (a script's text ends at the first ``</script``)."""
    parsed = _Markup()
    parsed.feed(text)
    parsed.close()
    assert [t for t, _ in parsed.tags].count("script") == scripts, name
    for tag, attrs in parsed.tags:
        assert tag != "svg", name
        assert (tag, attrs.get("src")) != ("img", "x"), name
        handlers = [a for a in attrs if a.startswith("on")]
        assert not handlers, f"{name}: <{tag}> got {handlers}"
        assert all(a in SAFE_ATTRIBUTES or a.startswith("data-") for a in attrs), (name, attrs)
    if name == "annotation form":  # the texts are data for its script, shown by textContent
        data = text.split('<script id="data" type="application/json">')[1].split("</script>")[0]
        assert orjson.loads(data)[0]["summary_1"] == "<script>alert(1)</script>"
    else:
        assert "<script>alert(1)</script>" in "".join(parsed.text), name  # shown, as text


def test_hostile_text_is_inert_in_every_pages_text(tmp_path: Path) -> None:
    pages = hostile_pages(tmp_path)
    for name, (path, scripts) in pages.items():
        _assert_inert_text(name, path.read_text(encoding="utf-8"), scripts)
    report = pages["report"][0].read_text(encoding="utf-8")
    assert "data-judge='judge|&#39; onmouseover=&#39;alert(1)&#39; x=&#39;'" in report


def test_hostile_cells_keep_every_markdown_table_whole(tmp_path: Path) -> None:
    run = _hostile_run(tmp_path / "run")
    run_report(load_run(run), load_lexicons(None), resamples=50)
    assert card_main([str(run), "--resamples", "50"]) in (0, 5, 6, 7)
    for name in ("report.md", "card.md"):
        lines = (run / name).read_text(encoding="utf-8").splitlines()
        tables = 0
        for i, line in enumerate(lines):
            if not line.startswith("|---"):
                continue
            tables += 1
            columns = _columns(lines[i - 1])
            body = itertools.takewhile(lambda x: x.startswith("| "), lines[i + 1 :])
            assert all(_columns(row) == columns for row in body), f"{name}: {lines[i - 1]}"
        assert tables >= 2, name  # the card and its silent moves, at least
        text = "\n".join(lines)
        assert "a \\| b<br>c \\`d\\` \\\\\\| e" in text  # the hostile cell, escaped
        assert "run\\<script>alert(1)\\</script>" in text  # the title: not a tag
        assert "<img" not in text.replace("\\<img", "")


def _columns(row: str) -> int:
    """Cells in a Markdown table row: pipes that no backslash escapes."""
    return len(re.findall(r"(?<!\\)(?:\\\\)*\|", row)) - 1


def test_hostile_text_runs_nothing_in_a_browser(tmp_path: Path) -> None:
    chromium.browser()  # skip early without it
    pages = hostile_pages(tmp_path)
    with chromium.page() as tab:
        tab.page.add_init_script(TRAP)
        for name, (path, scripts) in pages.items():
            tab.page.goto(path.resolve().as_uri())
            shown = _assert_ran_nothing(tab, name, scripts)
            assert "<script>alert(1)</script>" in shown, name  # shown as text
        # The report's filters still work on a hostile condition name (its chip and rows).
        tab.page.goto(pages["report"][0].resolve().as_uri())
        count = tab.page.evaluate(
            "(() => { const b = Array.from(document.querySelectorAll("
            "'#evidence button[data-key=condition]')).find(x => x.dataset.value.includes('<img'));"
            " b.click(); return Array.from(document.querySelectorAll('#evidence tbody tr'))"
            ".filter(r => !r.hidden).length; })()"
        )
        assert count == 40  # baseline and pbp rows of the hostile condition


def test_hostile_names_print_as_written_in_every_terminal_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Rich markup in a judge's or a condition's name is text: not styled, and ``[/]`` (an
    unmatched closing tag, which rich refuses with a MarkupError) does not stop the table."""
    judge = "[red]judge[/red] [/]"
    blind = ["B"] * 14 + ["A"] * 4 + ["Tie"] * 2
    frame = table(rows(blind), rows(blind[:8] + ["A"] * 12, "True[/]", target="A"))
    run = run_dir(tmp_path / "run", frame.with_columns(judge=pl.lit(judge)))
    run_report(load_run(run), load_lexicons(None), resamples=50)
    assert card_main([str(run), "--resamples", "50"]) in (0, 5, 6, 7)
    shown = capsys.readouterr().out
    assert shown.count("[red]judge[/red] [/]") >= 2  # the report's table and the card's
    assert "True[/]" in shown


# A real run whose every untrusted text carries markup: the fake judge explains with it, the
# items' documents and candidates end with it (so the rewrites, degraded copies and injected
# texts carry it too), a user-defined condition's name and injected sentence are made of it.
# Every page judgeprobe writes or serves for that run, opened in Chromium, runs none of it.
PWNED = ("<script>window.__pwned=1</script>", '<img src=x onerror="window.__pwned=1">')
HOSTILE_CUE = f'Cue"><svg onload=alert(1)>{PWNED[1]}'
INJECTED = "img[src='x'], svg, [onerror], [onload], [onmouseover]"


def _hostile_sweep(tmp_path: Path, judge: FakeJudge) -> Path:
    items = town_items(tmp_path / "items.jsonl", extra=f" {PWNED[0]} {PWNED[1]}")
    cfg = write_config(
        tmp_path / "c.toml", judge.url, items, protocols=["baseline"], order="12",
        conditions=["Blind", "Verbosity", "DegradedNumber", HOSTILE_CUE],
    )  # fmt: skip
    with cfg.open("a") as f:
        f.write(f"\n[cues.{toml_value(HOSTILE_CUE)}]\ntarget = \"A\"\n"
                f"inject = {{ where = \"A\", what = {toml_value(PWNED[0])} }}\n")  # fmt: skip
    run = tmp_path / "run"
    proc = run_cli("--config", str(cfg), "--out", str(run))
    assert proc.returncode == 0, proc.stderr
    card = card_main([str(run), "--resamples", "50"])
    assert card in (0, 5, 6, 7)
    return run


def _assert_ran_nothing(tab: chromium.Tab, name: str, scripts: int) -> str:
    """Nothing ran or was injected on the open page; its text."""
    page = tab.page
    page.wait_for_timeout(300)  # what a payload would run, on load or after
    assert page.evaluate("window.__pwned") is None, name
    assert page.evaluate("window.__ran") == [], name
    assert tab.dialogs == [], name
    assert tab.errors == [], name
    assert page.locator(INJECTED).count() == 0, name
    assert page.evaluate("document.scripts.length") == scripts, name
    return str(page.evaluate("document.body.textContent"))


def test_a_hostile_run_runs_nothing_on_any_page(tmp_path: Path) -> None:
    """The report (with its evidence browser), the card, the annotation form and the review
    page, over a real run: markup is shown as text, runs nothing, adds no element."""
    chromium.browser()  # skip early without it
    with FakeJudge(explanation=" ".join(PWNED)) as judge:
        run = _hostile_sweep(tmp_path, judge)
    with review_server(run) as url, chromium.page() as tab:
        tab.page.add_init_script(TRAP)
        rundir = RunDir(run)
        files = {"report": (rundir.report_html, 1), "card": (rundir.card_html, 0),
                 "annotation form": (rundir.annotation_form, 3)}  # fmt: skip
        for name, (path, scripts) in files.items():
            tab.page.goto(path.resolve().as_uri())
            shown = _assert_ran_nothing(tab, name, scripts)
            assert PWNED[1] in shown or PWNED[0] in shown, name  # shown, as text
        report = rundir.report_html.read_text(encoding="utf-8")
        assert HOSTILE_CUE not in report  # the name is escaped in the page's source too
        # The review page: every text, its verdicts and every pair drawn in turn.
        page = tab.page
        page.goto(url)
        page.wait_for_selector("body[data-ready]")
        texts = page.locator("#list li").count()
        assert texts >= 12  # rewrites, degraded copies, injected sentences
        for _ in range(texts):
            assert PWNED[0] in (page.text_content("#t-text") or "")
            assert page.locator("#t-verdicts td.ex").first.text_content() == " ".join(PWNED)
            page.keyboard.press("j")
        conditions = page.locator("#f-condition option").all_text_contents()
        assert any(c.startswith(HOSTILE_CUE) for c in conditions)
        page.click("#tab-labels")
        for _ in range(page.locator("#pair-list li").count()):
            assert PWNED[1] in (page.text_content("#p-response-1") or "")
            page.keyboard.press("j")
        shown = _assert_ran_nothing(tab, "review", 1)
        assert PWNED[0] in shown
