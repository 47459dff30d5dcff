"""Operating characteristics of ``agentkit eval --compare``'s tests, on seeded simulated agents
of known pass rates (offline, pure statistics; no timing):

- the exact McNemar test's false-positive rate between equal agents, at its level;
- the sequential rule's (mixture e-value, looked at after every batch) chance of ever declaring
  a difference between equal agents, against its bound;
- its power and average samples against a clear difference, beside the smallest fixed-size
  design reaching the same power.

    python benchmarks/bench_paired.py [--runs 4000]
"""

from __future__ import annotations

import argparse
import random

from agentkit.verdict._paired import fixed_rejects, sequential_stop, simulated_pairs


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4000)
    args = parser.parse_args(argv)
    rng = random.Random(2026)
    alpha, runs = 0.05, args.runs
    print(f"{runs} simulated comparisons per row, alpha {alpha}")
    for rate, n in ((0.6, 30), (0.9, 30), (0.5, 100)):
        fp = sum(fixed_rejects(simulated_pairs(rng, rate, rate, n), alpha) for _ in range(runs))
        print(f"McNemar, equal agents passing {rate:.0%}, {n} pairs: false positives "
              f"{fp / runs:.2%} (level {alpha:.0%})")
    for batch, cap in ((1, 200), (5, 200)):
        errors = sum(sequential_stop(simulated_pairs(rng, 0.5, 0.5, cap), alpha, batch)[0]
                     for _ in range(runs))
        print(f"sequential, equal agents, a look every {batch} pair(s) up to {cap}: ever "
              f"declared a difference {errors / runs:.2%} (bound {alpha:.0%})")
    for pass_a, pass_b, batch, cap in ((0.3, 0.8, 5, 60), (0.5, 0.8, 5, 150)):
        outcomes = [sequential_stop(simulated_pairs(rng, pass_a, pass_b, cap), alpha, batch)
                    for _ in range(runs)]
        power = sum(d for d, _ in outcomes) / runs
        average = sum(u for _, u in outcomes) / runs
        fixed = next((n for n in range(batch, cap + 1, batch)
                      if sum(fixed_rejects(simulated_pairs(rng, pass_a, pass_b, n), alpha)
                             for _ in range(runs)) / runs >= power), None)
        print(f"{pass_a:.0%} against {pass_b:.0%}: sequential (a look every {batch}, cap {cap}) "
              f"power {power:.1%} with {average:.1f} pairs on average; a fixed design needs "
              f"{fixed if fixed is not None else f'over {cap}'} pairs for that power")


if __name__ == "__main__":
    main()
