"""`tpu-stacks size MODEL --output-tokens-per-second N ...`: the cheapest slices and replicas for a traffic target.

A hook of `tpu-stacks size` (cli/size.py): without `--output-tokens-per-second` that command is unchanged.
With it, every slice shape of every generation (or of `--tpu`) is judged by tpu_stacks.traffic and the table
lists each candidate: per-replica output and input tokens/s, NTPOT and TTFT at the batch it assumes, what
binds, the price per hour of all replicas and GIQ's cost per million tokens, or why it fails.

The memory flags keep their meaning where a target gives them one and are refused where they conflict:
`--context` is the engine's max model length (refused below input + output tokens), `--batch` the most
sequences one replica decodes at once (vLLM `--max-num-seqs`, JetStream batch size), `--dtype`/`--kv-dtype`
the dtypes; `--max-num-batched-tokens` the tokens a vLLM step takes (absent: vLLM's own default on the generation,
catalog/engine_traffic.py, not a stack's), `--async-scheduling`/`--no-async-scheduling` vLLM's switch (absent: the
pinned build's default, on); `--workload train`, an engine without a calibrated model, a step budget
for an engine that prefills apart, and a custom model without its attention shape are refused.
"""

from __future__ import annotations

import argparse
import json

from tpu_stacks.catalog.engine_traffic import TRAFFIC
from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.cli.arguments import positive
from tpu_stacks.errors import UserError
from tpu_stacks.sources import addresses, footnotes
from tpu_stacks.traffic import (
    DEFAULT_PRICING,
    GIQ_DEFAULT_PRICING,
    PRICING_MODELS,
    TrafficAnswer,
    TrafficCandidate,
    TrafficTarget,
    read_profiles,
    size_for_traffic,
)
from tpu_stacks.traffic.model import MAX_BATCH
from tpu_stacks.traffic.target import DEFAULT_INPUT_TOKENS, DEFAULT_OUTPUT_TOKENS, OUTPUT_INPUT_COST_RATIO

TARGET_ONLY = (
    "ntpot_ms",
    "ttft_ms",
    "input_tokens",
    "output_tokens",
    "pricing",
    "region",
    "profiles",
    "max_num_batched_tokens",
    "async_scheduling",
)
PRICING_NOTE = (
    f"Pricing: {{pricing}} (ours defaults to {DEFAULT_PRICING}; GKE Inference Quickstart defaults to "
    f"{GIQ_DEFAULT_PRICING}). Cost per million tokens as GIQ defines it ([GIQ] Cost): "
    f"$/output token = $/s / (input tok/s / {OUTPUT_INPUT_COST_RATIO:g} + output tok/s), "
    f"$/input token = $/output token / {OUTPUT_INPUT_COST_RATIO:g}."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("traffic target (size for throughput and latency, not only memory)")
    group.add_argument("--output-tokens-per-second", type=positive(float), help="output tokens/s to carry")
    group.add_argument("--ntpot-ms", type=positive(float), help="normalized time per output token limit (GIQ NTPOT)")
    group.add_argument("--ttft-ms", type=positive(float), help="time to first token limit")
    group.add_argument("--input-tokens", type=positive(int), help=f"prompt tokens per request ({DEFAULT_INPUT_TOKENS})")
    group.add_argument(
        "--output-tokens", type=positive(int), help=f"output tokens per request ({DEFAULT_OUTPUT_TOKENS})"
    )
    group.add_argument("--pricing", choices=PRICING_MODELS, help=f"pricing model ({DEFAULT_PRICING}; GIQ's: spot)")
    group.add_argument("--region", help="recorded with the answer (catalogue prices are not per region)")
    group.add_argument("--profiles", help="a saved GIQ FetchProfiles/FetchBenchmarkingData response (JSON)")
    group.add_argument(
        "--max-num-batched-tokens",
        type=positive(int),
        help="tokens per engine step, as the server is told (vLLM --max-num-batched-tokens; a vLLM stack passes "
        "vllm.maxNumBatchedTokens); absent: vLLM's own default on each generation",
    )
    group.add_argument(
        "--async-scheduling",
        action=argparse.BooleanOptionalAction,
        help="as the server is told (vLLM --async-scheduling / --no-async-scheduling): a request then waits one "
        "queued step more, or not, before its first; absent: the pinned vLLM's default (on)",
    )


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command sizes for traffic; a target-only flag without a target is refused here."""
    if args.output_tokens_per_second is not None:
        return True
    for name in TARGET_ONLY:
        if getattr(args, name) is not None:
            flag = "--" + name.replace("_", "-")
            raise UserError(
                flag, getattr(args, name), "needs a traffic target", "add --output-tokens-per-second N, or drop it"
            )
    return False


def _refuse_conflicts(args: argparse.Namespace, model: ResolvedModel, target: TrafficTarget) -> None:
    if args.workload != "serve":
        raise UserError("--workload", args.workload, "cannot carry a serving traffic target", "drop --workload train")
    if args.engine not in TRAFFIC:
        raise UserError("--engine", args.engine, "has no calibrated performance model", f"use {' or '.join(TRAFFIC)}")
    if args.context is not None and args.context < target.input_tokens + target.output_tokens:
        raise UserError(
            "--context",
            args.context,
            f"is shorter than a request ({target.input_tokens} input + {target.output_tokens} output tokens)",
            f"give --context {target.input_tokens + target.output_tokens} or more, or shorter requests",
        )
    if args.max_num_batched_tokens is not None and TRAFFIC[args.engine].default_batched_tokens is None:
        raise UserError(
            "--max-num-batched-tokens",
            args.max_num_batched_tokens,
            f"is not a setting of {args.engine}, which the traffic model prefills apart from its decode steps",
            "drop it",
        )
    if args.async_scheduling is not None and not TRAFFIC[args.engine].async_switch:
        flag = "--async-scheduling" if args.async_scheduling else "--no-async-scheduling"
        raise UserError(
            flag, args.engine, "has no async scheduling to switch (it schedules one step at a time)", "drop it"
        )
    if model.architecture.attention is None:
        raise UserError(
            "--params",
            args.params,
            "has no attention shape, and the KV cache sets how many requests a replica holds",
            "give --layers, --kv-heads and --head-dim too",
        )


def answer(args: argparse.Namespace, model: ResolvedModel) -> TrafficAnswer:
    target = TrafficTarget(
        output_tokens_per_second=args.output_tokens_per_second,
        ntpot_ms=args.ntpot_ms,
        ttft_ms=args.ttft_ms,
        input_tokens=args.input_tokens or DEFAULT_INPUT_TOKENS,
        output_tokens=args.output_tokens or DEFAULT_OUTPUT_TOKENS,
        pricing=args.pricing or DEFAULT_PRICING,
        region=args.region,
    )
    _refuse_conflicts(args, model, target)
    profiles = read_profiles(args.profiles) if args.profiles else ()
    return size_for_traffic(
        model,
        target,
        engine=args.engine,
        generations=[args.tpu] if args.tpu else None,
        weight_dtype=args.dtype,
        kv_dtype=args.kv_dtype,
        max_model_len=args.context,
        max_batch=args.batch or MAX_BATCH,
        profiles=profiles,
        batched_tokens=args.max_num_batched_tokens,
        async_scheduling=args.async_scheduling,
    )


def run(args: argparse.Namespace, model: ResolvedModel) -> int:
    result = answer(args, model)
    if args.json:
        document = result.as_dict()
        document["target"]["region"] = result.target.region
        document.setdefault("params", model.params)  # the model record's counts, as `size --json` without a target
        document.setdefault("active_params", model.architecture.active_params)
        document["pricing_default"] = {"ours": DEFAULT_PRICING, "gke_inference_quickstart": GIQ_DEFAULT_PRICING}
        document["sources"] = addresses(json.dumps(document))
        print(json.dumps(document, indent=2))
    else:
        print(render(result))
    if result.choice is None:
        raise _nothing_meets(result)
    return 0


def _nothing_meets(result: TrafficAnswer) -> UserError:
    """One line naming the limit that no candidate could meet."""
    limits = {c.binding_limit for c in result.candidates}
    target = result.target
    if target.ttft_ms is not None and limits <= {"ttft-target", "kv-capacity"} and "ttft-target" in limits:
        return UserError("--ttft-ms", target.ttft_ms, "is met by no candidate slice", "allow a longer TTFT")
    if target.ntpot_ms is not None and "ntpot-target" in limits:
        return UserError("--ntpot-ms", target.ntpot_ms, "is met by no candidate slice", "allow a longer NTPOT")
    return UserError("MODEL", result.model.id, "fits no candidate slice", "try --dtype int8 or another --tpu")


def _money(value: float | None, digits: int = 2, meets: bool = True) -> str:
    """A price, `unknown` where no source gives it, `-` for a candidate that carries nothing (no replicas)."""
    if value is not None:
        return f"{value:,.{digits}f}"
    return "unknown" if meets else "-"


def _number(value: float | None, digits: int = 0) -> str:
    return f"{value:,.{digits}f}" if value is not None else "n/a"


def _row(candidate: TrafficCandidate, chosen: bool) -> str:
    per = candidate.per_replica
    verdict = "yes" if candidate.meets else f"no: {candidate.why}"
    return (
        f"{'>' if chosen else ' '} {candidate.generation:<6} {candidate.topology:<8} {candidate.machine_type:<18}"
        f" {candidate.chips_per_replica:>5} {candidate.hosts:>5} {_number(candidate.replicas):>8}"
        f" {_number(per.output_tokens_per_second):>9} {_number(per.input_tokens_per_second):>9}"
        f" {_number(per.ntpot_ms, 1):>7} {_number(per.ttft_ms, 0):>7} {_number(per.batch):>5}"
        f" {candidate.binding_limit or '-':<13} {candidate.basis:<8}"
        f" {_money(candidate.price_per_hour, meets=candidate.meets):>10}"
        f" {_money(candidate.cost_per_million_output_tokens, 3, candidate.meets):>8}"
        f" {_money(candidate.cost_per_million_input_tokens, 3, candidate.meets):>8}"
        f"  {verdict}"
    )


_FIGURES = ("output_tokens_per_second", "input_tokens_per_second", "ntpot_ms", "ttft_ms", "batch")


def render(result: TrafficAnswer) -> str:
    target = result.target
    limits = ", ".join(
        text
        for text in (
            f"NTPOT <= {target.ntpot_ms:g} ms" if target.ntpot_ms is not None else "",
            f"TTFT <= {target.ttft_ms:g} ms" if target.ttft_ms is not None else "",
        )
        if text
    )
    lines = [
        f"{result.model.id}: {target.output_tokens_per_second:g} output tokens/s"
        + (f" within {limits}" if limits else "")
        + f", requests of {target.input_tokens} input / {target.output_tokens} output tokens",
        PRICING_NOTE.format(pricing=target.pricing)
        + (f" Region {target.region} is recorded; catalogue prices are not per region." if target.region else ""),
        "",
        f"  {'gen':<6} {'topology':<8} {'machine type':<18} {'chips':>5} {'hosts':>5} {'replicas':>8}"
        f" {'out tok/s':>9} {'in tok/s':>9} {'NTPOT':>7} {'TTFT':>7} {'batch':>5} {'binding':<13} {'basis':<8}"
        f" {'$/hour':>10} {'$/M out':>8} {'$/M in':>8}  meets",
    ]
    lines += [_row(candidate, candidate == result.choice) for candidate in result.candidates]
    lines.append("  (per-replica figures; NTPOT and TTFT in ms; $/hour for all replicas)")
    priced = {c.generation: c for c in result.candidates}  # one price source per generation and pricing model
    lines += [
        f"  {name} price: {c.price_source}" + (f", {c.price_as_of}" if c.price_as_of else "")
        for name, c in priced.items()
    ]
    choice = result.choice
    if choice is not None:
        lines += [
            "",
            f"Choice: {choice.replicas} x {choice.generation} {choice.topology} on {choice.machine_type}"
            f" ({choice.chips_per_replica} chip{'s' if choice.chips_per_replica > 1 else ''},"
            f" {choice.hosts} host{'s' if choice.hosts > 1 else ''} per replica;"
            f" tensor-parallel {choice.tensor_parallel}, pipeline-parallel {choice.pipeline_parallel})",
            f"  {choice.basis}: {choice.source}",
            "  measured: "
            + (", ".join(choice.measured_figures) or "none")
            + "; modelled or derived: "
            + (", ".join(f for f in _FIGURES if f not in choice.measured_figures) or "none"),
            f"  price: {_money(choice.price_per_hour)} $/hour ({choice.price_source}"
            + (f", {choice.price_as_of})" if choice.price_as_of else ")"),
        ]
    else:
        lines += ["", "No candidate meets the target."]
    lines.append(
        "Basis: measured = a published run of the pinned engine build on the same model, generation and chips"
        " (tpu_stacks/catalog/throughput_measurements.py); profile = a GIQ profile from --profiles;"
        " model = the calibrated roofline (docs/sizing-for-traffic.md gives its error on every published row)."
    )
    cited = footnotes("\n".join(lines))
    lines += ["Sources:", *(f"  {note}" for note in cited)] if cited else []
    return "\n".join(lines)
