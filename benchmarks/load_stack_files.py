"""What reading stack files as the Pulumi CLI does (tpu_stacks_preview.stack_yaml: YAML 1.2 scalars,
duplicate keys refused, lines kept for errors) costs next to PyYAML's plain `safe_load`, per file, on
every shipped stack file. Prints microseconds per file (best of --repeat); asserts nothing."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import yaml

from tpu_stacks_preview.stack_yaml import load

ROOT = Path(__file__).resolve().parents[1]


def best(fn, repeat: int, number: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - started) / number)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=200)
    args = parser.parse_args()
    files = sorted(ROOT.glob("Pulumi.*.yaml"))
    ours = sum(best(lambda f=f: load(f), args.repeat, args.number) for f in files) / len(files)
    plain = sum(best(lambda f=f: yaml.safe_load(f.read_text()), args.repeat, args.number) for f in files) / len(files)
    print(
        f"{len(files)} stack files: stack_yaml.load {ours * 1e6:.0f} us/file, yaml.safe_load {plain * 1e6:.0f} us/file"
    )


if __name__ == "__main__":
    main()
