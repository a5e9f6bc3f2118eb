"""Write the bundled rubric sample (`judgeprobe/data/rubric/sample.jsonl`) from the scenarios.

    python experiments/rubric-sample/make_sample.py

The scenarios are data; this script only combines them, deterministically. Each scenario is a
user question, an opening line and four claims; each domain adds a closing claim. A claim is a
verb and two clauses, the correct one and its opposite. From them:

- two responses per scenario: **full** (every claim, correctly) and **brief** (two claims
  left out, rotating by scenario so position carries no signal);
- one criterion per claim and response, worth positive points when it asks for the correct
  clause and negative points when it names the opposite (the shape of HealthBench rubrics);
- the **negated criterion** swaps the two clauses when the response makes the claim, and is
  the plain negation ("Does not state that ...") when it leaves it out;
- the **reversed response** is the minimal counterfactual for that criterion: the claim's
  sentence swapped for its opposite, or added when the response left it out.

Either counterfactual should flip a careful judge's verdict. The scenario order alternates
splits, so the first N items (``--limit``) cover every domain and, past the first 60, both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios.json"
SAMPLE = HERE.parent.parent / "judgeprobe" / "data" / "rubric" / "sample.jsonl"


def rows(spec: dict[str, Any] | None = None) -> list[dict[str, object]]:
    """Every rubric item of the sample, in file order."""
    spec = spec or json.loads(SCENARIOS.read_text(encoding="utf-8"))
    verbs = spec["verbs"]

    def sentence(verb: str, clause: str) -> str:
        return str(verbs[verb]["sentence"]).format(c=clause, C=clause[:1].upper() + clause[1:])

    def criterion(verb: str, clause: str, *, negate: bool = False) -> str:
        return str(verbs[verb]["negation" if negate else "criterion"]).format(c=clause)

    def render(opening: str, claims: list[str]) -> str:
        return " ".join([opening, *claims])

    out: list[dict[str, object]] = []
    for s in spec["scenario_order"]:
        for domain, scenarios in spec["scenarios"].items():
            scenario = scenarios[s]
            opening = scenario["opening"]
            every = [(c["verb"], c["correct"], c["opposite"]) for c in scenario["claims"]]
            closing = spec["closings"][domain]
            every.append((closing["verb"], closing["correct"], closing["opposite"]))
            left_out = {s % 4, (s + 2) % 4}  # brief responses skip two claims, rotating
            for kind in ("full", "brief"):
                shown = [k for k in range(len(every)) if kind == "full" or k not in left_out]
                said = {k: sentence(every[k][0], every[k][1]) for k in shown}
                for k, (verb, good, bad) in enumerate(every):
                    negative = (s + k) % 2 == 1  # half the criteria name the wrong clause
                    asked, other = (bad, good) if negative else (good, bad)
                    present = k in said
                    # Minimal counterfactual: swap this claim's sentence, or add it.
                    swapped = dict(said)
                    swapped[k] = sentence(verb, bad if present else good)
                    satisfied = present != negative
                    axis = verbs[verb]["axis"]
                    out.append(
                        {
                            "item_id": f"{domain}-{s + 1:02d}-{kind}-c{k + 1}",
                            "split": "a" if s < 3 else "b",
                            "domain": domain,
                            "prompt": scenario["question"],
                            "response": render(opening, [said[i] for i in sorted(said)]),
                            "criterion": criterion(verb, asked),
                            "points": -(k % 3 + 2) if negative else k % 3 + 3,
                            "tags": [f"domain:{domain}", f"axis:{axis}", f"response:{kind}"],
                            "expected": "satisfied" if satisfied else "violated",
                            "reversed_response": render(
                                opening, [swapped[i] for i in sorted(swapped)]
                            ),
                            "negated_criterion": (
                                criterion(verb, other)
                                if present
                                else criterion(verb, asked, negate=True)
                            ),
                        }
                    )
    return out


def main() -> None:
    """Regenerate the bundled rubric sample from the scenarios (a golden-file test pins it)."""
    lines = [json.dumps(r, ensure_ascii=False) for r in rows()]
    SAMPLE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} rubric items to {SAMPLE}")


if __name__ == "__main__":
    main()
