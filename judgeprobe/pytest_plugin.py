"""The pytest plugin: ``pytest --judge-card RUN`` makes each row of a judge card a test.

Registered as a ``pytest11`` entry point, so an installed judgeprobe needs no import or
conftest. Each ``--judge-card`` (repeatable; a glob, a run directory or a card.json) adds one
test per row, named ``judge_card[RUN]::JUDGE|PROTOCOL|ROW`` (characters a test id cannot hold
percent-escaped). A row's outcome is the CI gate's (``card.gate.OUTCOMES``): BIASED, UNSTABLE,
INSENSITIVE and DOES-NOT-REPLACE fail with the row's sentence and interval; CLEAR, STABLE,
SENSITIVE and REPLACES pass; UNDERPOWERED skips with its minimum detectable effect (fails under
``--judge-card-strict``); OBSERVED and NOISY pass with their figures in the report. Every row
carries its figures as ``user_properties`` (JUnit ``<property>`` elements under
``--junitxml``). The ``judge_card`` fixture loads a card for a test's own assertions.

Nothing of the card's logic lives here: the rows are card.json's, read through the published
model; the rule is ``card.gate``'s.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from judgeprobe import JudgeprobeError

if TYPE_CHECKING:  # the card's modules load only when a card is asked for: every pytest run
    from judgeprobe.api import Card  # loads this plugin once judgeprobe is installed
    from judgeprobe.card.published import PublishedCard
    from judgeprobe.card.record import CardRow

OPTION = "--judge-card"
STRICT = "--judge-card-strict"
MARK = "judge_card"
_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,()+=<>'-]")


def escape(text: str) -> str:
    """``text`` with every character a test id cannot hold as ``%XX`` (its UTF-8 bytes)."""
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--judge-card RUN`` (repeatable, globs) and ``--judge-card-strict``."""
    group = parser.getgroup("judgeprobe", "judge cards as tests (judgeprobe)")
    group.addoption(OPTION, action="append", default=[], metavar="RUN",
                    help="a run directory (or card.json, or a glob of either) whose card rows "
                    "become tests; repeatable")  # fmt: skip
    group.addoption(STRICT, action="store_true",
                    help="UNDERPOWERED rows fail instead of being skipped")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    """The ``judge_card`` marker every card row's test carries (``-m judge_card``)."""
    config.addinivalue_line("markers", f"{MARK}: a row of a judge card (--judge-card)")


def card_paths(patterns: list[str]) -> list[Path]:
    """Every card the patterns name, once each, in the order given; one line when one is none."""
    found: dict[Path, Path] = {}  # the card file → the path as given
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) or ([pattern] if Path(pattern).exists() else [])
        if glob.has_magic(pattern):  # a glob's folders without a card are not runs: left out
            matches = [m for m in matches if Path(m).is_file() or (Path(m) / "card.json").is_file()]
        if not matches:
            raise pytest.UsageError(f"{OPTION} {pattern}: matches no run directory or card")
        for match in map(Path, matches):
            found.setdefault((match if match.is_file() else match / "card.json").resolve(), match)
    return list(found.values())


def _labels(paths: list[Path]) -> list[str]:
    """Each card's name in test ids: its run directory's name, its path where two share one."""
    runs = [p.parent if p.is_file() else p for p in paths]
    names = [r.resolve().name for r in runs]
    return [str(r) if names.count(n) > 1 else n for r, n in zip(runs, names, strict=True)]


class CardRowFailed(Exception):
    """A row whose verdict fails the gate: its sentence is the failure's whole report."""


class CardRowItem(pytest.Item):
    """One card row as a test."""

    def __init__(self, *, row: CardRow, strict: bool, **kwargs: object) -> None:
        from judgeprobe.card.gate import outcome, row_figures, row_sentence

        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.row = row
        self.strict = strict
        self.add_marker(MARK)
        self.user_properties += row_figures(row)
        if outcome(row.verdict, strict=strict) == "skip":  # skipped at setup, at the card
            self.add_marker(pytest.mark.skip(reason=f"{row_sentence(row)} (a failure under "
                                                    f"{STRICT})"))  # fmt: skip

    def runtest(self) -> None:
        """Pass, fail or skip by the row's verdict (``card.gate.outcome``)."""
        from judgeprobe.card.gate import outcome, row_sentence

        found = outcome(self.row.verdict, strict=self.strict)
        sentence = row_sentence(self.row)
        if found == "fail":
            raise CardRowFailed(sentence)
        self.add_report_section("call", "judge card", sentence)

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: object = None
    ) -> str:
        """The row's sentence, not a traceback into the plugin."""
        if isinstance(excinfo.value, CardRowFailed):
            return f"{self.row.judge} · {self.row.protocol} · {self.row.row}: {excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the test comes from: the card."""
        return self.path, 0, f"{self.row.judge} · {self.row.protocol} · {self.row.row}"


class JudgeCardFile(pytest.Collector):
    """A card: its rows as tests."""

    def __init__(self, *, card: PublishedCard, strict: bool, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.card = card
        self.strict = strict

    def collect(self) -> Iterator[CardRowItem]:
        """One item per row, in the card's order."""
        for row in self.card.rows:
            name = "|".join(escape(part) for part in (row.judge, row.protocol, row.row))
            yield CardRowItem.from_parent(
                self, name=name, row=row, strict=self.strict, path=self.path
            )


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they select rows too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """The rows of every ``--judge-card``, after the suite's own tests."""
    from judgeprobe.card.gate import read_card

    paths = card_paths(config.getoption(OPTION))
    strict = bool(config.getoption(STRICT))
    for path, label in zip(paths, _labels(paths), strict=True):
        try:
            card = read_card(path)
        except JudgeprobeError as exc:
            raise pytest.UsageError(f"{OPTION} {path}: {exc}") from None
        collector = JudgeCardFile.from_parent(
            session, name=f"{MARK}[{escape(label)}]", nodeid=f"{MARK}[{escape(label)}]",
            card=card, strict=strict,
            path=(path if path.is_file() else path / "card.json").resolve(),
        )  # fmt: skip
        items.extend(collector.collect())


@pytest.fixture
def judge_card(request: pytest.FixtureRequest) -> Callable[..., Card]:
    """Load a card for a test's own assertions: ``judge_card("runs/x")``.

    With no argument: the one card ``--judge-card`` names.
    """
    from judgeprobe.api import read_card

    def load(path: str | Path | None = None) -> Card:
        if path is None:
            given = card_paths(request.config.getoption(OPTION))
            if len(given) != 1:
                raise pytest.UsageError(f"judge_card(): give a path, or one {OPTION} (got "
                                        f"{len(given)})")  # fmt: skip
            path = given[0]
        return read_card(path)

    return load
