"""`tpu-stacks bench --stack S`: measure the stack's deployed server with inference-perf over a sweep of request
rates and write what it measured as a GKE Inference Quickstart profile, which `tpu-stacks size --profiles` and a
stack's `slo.profiles` read (docs/bench.md).

The server, its model and its slice come from the stack's offline plan; the run is one hardened Job in the stack's
namespace (created, awaited, deleted). `--dry-run` prints the objects instead; `--from-log FILE` converts a saved
Job log without a cluster. Exit 0 when the profile was written, 1 when the run failed, 2 on the user's input.
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import sys
from pathlib import Path

import yaml

from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.traffic.profiles import Profile, profiles_document
from tpu_stacks.traffic.target import DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS
from tpu_stacks_live.bench.config import DEFAULT_RATES, STAGE_DURATION_S, Workload
from tpu_stacks_live.bench.job import manifests
from tpu_stacks_live.bench.report import measured_profile, stage_reports, stages
from tpu_stacks_live.bench.run import BenchFailed, Run, live_apis
from tpu_stacks_live.bench.target import BenchTarget, bench_target
from tpu_stacks_live.verify.plan import load_plan

MAX_RATE = 1000.0
"""More requests per second than any one TPU server here answers: a larger number is a typo."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n")[0]
    parser.add_argument("--stack", help="the stack to measure: reads Pulumi.<stack>.yaml and plans it offline")
    parser.add_argument("--cwd", default=".", help="the Pulumi project directory (default: .)")
    rates = ",".join(f"{r:g}" for r in DEFAULT_RATES)
    parser.add_argument("--rates", default=rates, help=f"requests per second, one stage each (default: {rates})")
    parser.add_argument("--duration", default=str(STAGE_DURATION_S), help="seconds per stage (default: %(default)s)")
    parser.add_argument("--input-tokens", default=str(DEFAULT_INPUT_TOKENS), help="prompt tokens per request")
    parser.add_argument("--output-tokens", default=str(DEFAULT_OUTPUT_TOKENS), help="output tokens per request")
    parser.add_argument("--out", help="the profile file to write (default: profiles/bench-<stack>.json)")
    parser.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
    parser.add_argument("--context", help="kubeconfig context (default: its current context)")
    parser.add_argument("--dry-run", action="store_true", help="print the objects a run creates, and exit")
    parser.add_argument("--from-log", metavar="FILE", help="convert a saved Job log instead of running on a cluster")
    parser.add_argument("--keep", action="store_true", help="leave the Job and its objects in the cluster")


def parse_rates(text: str) -> tuple[float, ...]:
    """`1,2,4.5` as request rates: each a finite number above 0 and at most MAX_RATE, each once, in order."""
    fix = "give requests per second separated by commas, e.g. --rates 1,2,4,8"
    found: list[float] = []
    for word in text.split(","):
        try:
            rate = float(word)
        except ValueError:
            raise UserError("--rates", text, f"has {word.strip()!r}, not a number", fix) from None
        if not math.isfinite(rate) or rate <= 0 or rate > MAX_RATE:
            raise UserError("--rates", text, f"has {word.strip()}, not a rate above 0 and at most {MAX_RATE:g}", fix)
        if rate not in found:
            found.append(rate)
    return tuple(found)


def _count(key: str, text: str, example: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise UserError(key, text, "is not a whole number above 0", f"e.g. {key} {example}")
    return value


def setup(target: BenchTarget) -> Profile:
    """The profile of the stack's server on its slice, its points still to measure."""
    return Profile(
        model=target.model,
        model_server=target.engine,
        model_server_version=target.engine_version,
        accelerator_type=target.accelerator,
        tpu_topology=target.topology,
        instance_type=target.machine_type,
        accelerator_count=target.chips,
        points=(),
    )


def _unwritable(given: str | None, out: Path, error: OSError) -> UserError:
    """`--out` as the user wrote it (or the default path it stood for) and why the profile cannot go there."""
    fix = "give --out a file path in a folder you can write, e.g. --out profiles/bench.json"
    if isinstance(error, IsADirectoryError):
        problem = "is a folder, not a file"
    elif isinstance(error, FileExistsError | NotADirectoryError):
        problem = "cannot be written (a file stands where one of its folders would be)"
    else:
        problem = f"cannot be written ({error.strerror or error})"
    return UserError("--out", given if given else str(out), problem, fix)


def _check_writable(given: str | None, out: Path) -> None:
    """Refuse an `--out` that cannot be written before anything runs: a folder, a path through a file, or a folder
    the user may not write. Probed by creating the folder and opening the file for appending, which changes
    nothing of an existing file; a probe that created the file removes it again."""
    existed = out.exists()
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", encoding="utf-8"):
            pass
    except OSError as error:
        raise _unwritable(given, out, error) from None
    if not existed:
        out.unlink()


def _log(args: argparse.Namespace, target: BenchTarget, workload: Workload) -> str:
    if args.from_log:
        try:
            return Path(args.from_log).read_text(encoding="utf-8")
        except OSError as error:
            problem = f"cannot be read ({error.strerror})"
            raise UserError("--from-log", args.from_log, problem, "give the saved log") from None
        except UnicodeDecodeError as error:
            problem = f"is not UTF-8 text (byte {error.start} is {error.object[error.start]:#04x})"
            fix = "give the Job's log as `kubectl logs` saved it (inference-perf prints UTF-8)"
            raise UserError("--from-log", args.from_log, problem, fix) from None
    objects = manifests(target, workload, secrets.token_hex(3))
    return Run(live_apis(args.kubeconfig, args.context), objects, keep=args.keep).run()


def _bench(args: argparse.Namespace) -> int:
    if not args.stack:
        raise UserError("--stack", MISSING, "is required", "name the stack to measure, e.g. --stack dev")
    workload = Workload(
        rates=parse_rates(args.rates),
        input_tokens=_count("--input-tokens", args.input_tokens, str(DEFAULT_INPUT_TOKENS)),
        output_tokens=_count("--output-tokens", args.output_tokens, str(DEFAULT_OUTPUT_TOKENS)),
        duration_s=_count("--duration", args.duration, str(STAGE_DURATION_S)),
    )
    target = bench_target(load_plan(Path(args.cwd), args.stack))
    out = Path(args.out) if args.out else Path(args.cwd) / "profiles" / f"bench-{args.stack}.json"
    if args.dry_run:
        print(yaml.safe_dump_all(manifests(target, workload, "dryrun"), sort_keys=False), end="")
        return 0
    _check_writable(args.out, out)  # before the run: a sweep's measurements must not be lost to a bad --out
    log = _log(args, target, workload)
    try:
        measured = stages(stage_reports(log, args.from_log or "the Job's log"), args.from_log or "the Job's log")
    except UserError as error:
        if args.from_log:
            raise
        raise BenchFailed(f"the Job's log {error.problem}") from None  # the Job's output, not the user's input
    profile, notes = measured_profile(setup(target), measured)
    for item in measured:
        ttft = f"{item.ttft_ms:.0f} ms" if item.ttft_ms is not None else "n/a"
        print(f"{item.requested_rate:g} req/s: {item.output_tokens_per_second:.0f} output tok/s, "
              f"NTPOT {item.ntpot_ms:.1f} ms, TTFT {ttft}, {item.failures} failed")  # fmt: skip
    for note in notes:
        print(note)
    if not profile.points:
        print("no stage without failures: nothing to write; lower --rates", file=sys.stderr)
        return 1
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(profiles_document([profile]), indent=2) + "\n", encoding="utf-8")
    except OSError as error:
        raise _unwritable(args.out, out, error) from None
    print(f"wrote {out}: tpu-stacks size {target.model} --profiles {out} (or the stack's slo.profiles)")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return _bench(args)
    except UserError as error:
        print(f"tpu-stacks: {error}", file=sys.stderr)
        return 2
    except BenchFailed as error:
        print(f"tpu-stacks bench: {error}", file=sys.stderr)
        return 1
