"""judgeprobe's alt-test against the AltTest repository's notebook, dataset by dataset.

    python bench/alttest_reproduce.py PATH/TO/AltTest          # a local copy of the repository

The repository (github.com/nitaytech/AltTest, commit 18428b1) carries no licence, so its data is
not committed here: fetch a copy and point this script at it. For each dataset the notebook
prints, it reads ``data/<dataset>/human_annotations.json`` and ``llm_annotations.json`` through
``judgeprobe alttest``'s own reader, runs the test at the notebook's metric and ε, and prints
judgeprobe's winning rate ω and advantage probability ρ beside the notebook's printed ones
(``NOTEBOOK``, copied from the output cell of ``alt_test_example.ipynb``). Exits 1 when any
figure differs by more than 0.01, 2 when the copy lacks a dataset.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from judgeprobe.calibrate.annotations import file_cases
from judgeprobe.metrics.alttest import ACCURACY, NEG_RMSE, Metric, alt_test, wins

TOLERANCE = 0.01
SETTINGS: dict[str, tuple[Metric, float]] = {
    "wax": (ACCURACY, 0.1),
    "lgbteen": (ACCURACY, 0.2),
    "mtbench": (ACCURACY, 0.2),
    "framing": (ACCURACY, 0.15),
    "cebab_aspects": (ACCURACY, 0.1),
    "summeval": (NEG_RMSE, 0.2),
    "10k_prompts": (NEG_RMSE, 0.15),
    "cebab_stars": (NEG_RMSE, 0.1),
    "lesion": (NEG_RMSE, 0.15),
}
"""The notebook's metric and ε per dataset (its ``datasets_scoring_functions``/``_epsilons``)."""
NOTEBOOK: dict[str, dict[str, tuple[float, float]]] = {
    "wax": {"gemini_flash": (0.38, 0.69), "gemini_pro": (0.50, 0.74), "gpt-4o": (0.50, 0.73),
            "llama-31": (0.00, 0.57), "gpt-4o-mini": (0.00, 0.59),
            "mistral-v03": (0.00, 0.50)},
    "lgbteen": {"gemini_flash": (0.25, 0.71), "gemini_pro": (0.00, 0.67),
                "gpt-4o": (0.75, 0.77), "llama-31": (0.00, 0.72), "gpt-4o-mini": (0.75, 0.76),
                "mistral-v03": (0.25, 0.75)},
    "mtbench": {"gemini_flash": (0.00, 0.72), "gemini_pro": (0.00, 0.76),
                "gpt-4o": (0.00, 0.77), "llama-31": (0.00, 0.69), "gpt-4o-mini": (0.00, 0.74),
                "mistral-v03": (0.00, 0.68)},
    "framing": {"gemini_flash": (1.00, 0.83), "gemini_pro": (1.00, 0.91),
                "gpt-4o": (1.00, 0.92), "llama-31": (0.50, 0.80), "gpt-4o-mini": (1.00, 0.87),
                "mistral-v03": (0.25, 0.80)},
    "cebab_aspects": {"gemini_flash": (0.70, 0.91), "gemini_pro": (0.90, 0.94),
                      "gpt-4o": (0.90, 0.93), "llama-31": (0.60, 0.89),
                      "gpt-4o-mini": (0.50, 0.90), "mistral-v03": (0.10, 0.81)},
    "summeval": {"gemini_flash": (0.00, 0.46), "gemini_pro": (0.00, 0.44),
                 "gpt-4o": (0.00, 0.48), "llama-31": (0.00, 0.58),
                 "gpt-4o-mini": (0.00, 0.54), "mistral-v03": (0.00, 0.62)},
    "10k_prompts": {"gemini_flash": (0.31, 0.67), "gemini_pro": (0.08, 0.63),
                    "gpt-4o": (0.69, 0.76), "llama-31": (0.15, 0.67),
                    "gpt-4o-mini": (0.92, 0.80), "mistral-v03": (0.15, 0.67)},
    "cebab_stars": {"gemini_flash": (0.60, 0.82), "gemini_pro": (0.80, 0.87),
                    "gpt-4o": (0.90, 0.90), "llama-31": (0.60, 0.85),
                    "gpt-4o-mini": (0.90, 0.89), "mistral-v03": (0.50, 0.83)},
    "lesion": {"gemini_flash": (0.17, 0.71), "gemini_pro": (1.00, 0.81),
               "gpt-4o": (0.00, 0.62), "gpt-4o-mini": (0.67, 0.73)},
}  # fmt: skip
"""The notebook's printed ω and ρ (two decimals) per dataset and LLM."""


def compare(root: Path) -> list[tuple[str, str, float, float, float, float, float]]:
    """(dataset, llm, ε, ω, ω printed, ρ, ρ printed) for every figure the notebook prints."""
    out = []
    for dataset, (metric, epsilon) in SETTINGS.items():
        folder = root / "data" / dataset
        for case in file_cases(folder / "human_annotations.json",
                               folder / "llm_annotations.json", None, metric):  # fmt: skip
            printed = NOTEBOOK[dataset].get(case.judge)
            if printed is None:
                continue
            test = alt_test(wins(case.humans, case.judge_labels, metric), epsilon)
            out.append((dataset, case.judge, epsilon, test.winning_rate, printed[0],
                        test.advantage_probability, printed[1]))  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the comparison; 0 when every figure matches to ±0.01."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("repo", type=Path, help="a local copy of github.com/nitaytech/AltTest")
    root = p.parse_args(argv).repo
    missing = [d for d in SETTINGS if not (root / "data" / d / "human_annotations.json").is_file()]
    if missing:
        print(f"error: {root}: no data/{missing[0]}/human_annotations.json", file=sys.stderr)
        return 2
    rows = compare(root)
    print("| dataset | LLM | ε | ω judgeprobe | ω notebook | ρ judgeprobe | ρ notebook |")
    print("|---|---|---|---|---|---|---|")
    worst = 0.0
    for dataset, llm, eps, w, w_nb, r, r_nb in rows:
        worst = max(worst, abs(w - w_nb), abs(r - r_nb))
        print(f"| {dataset} | {llm} | {eps:g} | {w:.3f} | {w_nb:.2f} | {r:.3f} | {r_nb:.2f} |")
    datasets = len({r[0] for r in rows})
    print(f"\n{len(rows)} judges × datasets on {datasets} datasets; largest difference {worst:.4f} "
          f"(tolerance {TOLERANCE})")  # fmt: skip
    return 0 if worst <= TOLERANCE and rows else 1


if __name__ == "__main__":
    sys.exit(main())
