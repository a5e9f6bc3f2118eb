"""Scale benchmarks (P1–P5 and judge choice); results and targets in bench/RESULTS.md."""
