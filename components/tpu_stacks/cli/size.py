"""`tpu-stacks size MODEL --tpu GEN`: which slices hold the model, and the one to use."""

from __future__ import annotations

import argparse
import json
from typing import get_args

from tpu_stacks.catalog.capacity import KIND_FACTS, PRICING_URL, slice_prices
from tpu_stacks.catalog.engine_models import check_architecture, check_context
from tpu_stacks.catalog.engines import served_weight_dtype
from tpu_stacks.catalog.engines.record import Engine
from tpu_stacks.catalog.model_shape import BYTES_PER_DTYPE, DEFAULT_KV_DTYPE
from tpu_stacks.catalog.models import ResolvedModel, custom_model, lookup_model, parse_param_count
from tpu_stacks.catalog.tpu import generation, generation_names
from tpu_stacks.cli import size_compare, size_traffic
from tpu_stacks.cli.arguments import positive
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.sizing import (
    Candidate,
    Parallelism,
    ServingRequest,
    SizingResult,
    TrainingRequest,
    breakdown,
    gib,
    serving_parallelism,
    size,
)
from tpu_stacks.sources import addresses, footnotes

# Defaults that match the tutorials: vLLM's max-model-len 8192 (serve), MaxText's max_target_length 4096 (train).
DEFAULT_CONTEXT = {"serve": 8192, "train": 4096}
SHOWN_BEYOND_RECOMMENDED = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", nargs="?", help="Hugging Face id, Saxml model path or alias (omit with --params)")
    parser.add_argument(
        "--tpu", help=f"TPU generation: {', '.join(generation_names())} (optional with --output-tokens-per-second)"
    )
    parser.add_argument("--workload", choices=["serve", "train"], default="serve")
    parser.add_argument("--engine", choices=list(get_args(Engine)), default="vllm")
    parser.add_argument(
        "--context", type=positive(int), help="tokens per sequence (serve: max model length; train: sequence length)"
    )
    parser.add_argument(
        "--batch",
        type=positive(int),
        help="serve: sequences held at once (1; with a traffic target the most per replica); train: per-device batch",
    )
    parser.add_argument(
        "--model-config",
        help="the model's Hugging Face config.json (a model outside the catalogue and models/)",
    )
    parser.add_argument(
        "--dtype",
        choices=list(BYTES_PER_DTYPE),
        help="serving weight dtype (default: what the engine serves the checkpoint in: its quantization, else bf16)",
    )
    parser.add_argument("--kv-dtype", choices=list(BYTES_PER_DTYPE), default=DEFAULT_KV_DTYPE)
    parser.add_argument("--params", help="custom model: parameter count such as 7B")
    parser.add_argument("--layers", type=positive(int))
    parser.add_argument("--kv-heads", type=positive(int))
    parser.add_argument("--head-dim", type=positive(int))
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    size_traffic.add_arguments(parser)


def _catalogue_name(name: str) -> bool:
    """Whether `name` is a catalogue model (or alias): its architecture is known, so `--params` would
    silently describe another model."""
    try:
        lookup_model(name, key="MODEL")
    except UserError:
        return False
    return True


def resolve_model(args: argparse.Namespace) -> ResolvedModel:
    custom = [
        flag
        for flag, value in (
            ("--params", args.params),
            ("--layers", args.layers),
            ("--kv-heads", args.kv_heads),
            ("--head-dim", args.head_dim),
        )
        if value is not None
    ]
    if args.model_config and custom:
        raise UserError(
            custom[0],
            getattr(args, custom[0].lstrip("-").replace("-", "_")),
            "cannot describe a model whose config.json --model-config gives",
            f"drop {custom[0]} or --model-config",
        )
    if args.model_config:
        if not args.model:
            raise UserError("MODEL", MISSING, "is required with --model-config", "name the model, e.g. Qwen/Qwen2.5-7B")
        return lookup_model(args.model, key="MODEL", model_config=args.model_config, config_key="--model-config")
    if args.model and custom and _catalogue_name(args.model):
        raise UserError(
            custom[0],
            getattr(args, custom[0].lstrip("-").replace("-", "_")),
            f"cannot describe {args.model}, a catalogue model whose architecture is known",
            f"drop {custom[0]}, or give a custom model by --params alone (no MODEL)",
        )
    if args.params:
        name = args.model or f"custom-{args.params}"
        return custom_model(
            name,
            parse_param_count(args.params, "--params"),
            args.layers,
            args.kv_heads,
            args.head_dim,
            params_key="--params",
            shape_key="--layers/--kv-heads/--head-dim",
        )
    if not args.model:
        raise UserError("MODEL", "", "is missing", "name a model (e.g. meta-llama/Llama-3.1-70B) or give --params")
    return lookup_model(args.model, key="MODEL")


def with_model_defaults(args: argparse.Namespace, model: ResolvedModel) -> None:
    """Settings the model decides when the user did not: the weight dtype (a quantized checkpoint's); and the
    refusals of a model class vLLM TPU lacks and of a context longer than the model takes."""
    if args.workload == "serve":
        check_architecture(args.engine, model.architecture, "MODEL", model.id)
    if args.dtype is None:  # what the engine's `--dtype auto` serves (its rule, the one its plan reads)
        serve = args.workload == "serve"
        args.dtype = served_weight_dtype(args.engine, model.architecture) if serve else model.architecture.serving_dtype
    if args.context is not None:
        check_context(model.architecture, args.context, "--context", f"give --context {model.architecture.max_context}")


def compute(args: argparse.Namespace) -> SizingResult:
    model = resolve_model(args)
    with_model_defaults(args, model)
    gen = generation(args.tpu, key="--tpu")
    batch = args.batch or 1
    context = args.context or min(DEFAULT_CONTEXT[args.workload], model.architecture.max_context or 1 << 30)
    request: ServingRequest | TrainingRequest
    if args.workload == "serve":
        request = ServingRequest(
            model=model,
            engine=args.engine,
            weight_dtype=args.dtype,
            kv_dtype=args.kv_dtype,
            context=context,
            batch=batch,
            prefill_tokens=min(context * batch, 8192),
        )
    else:
        request = TrainingRequest(model=model, per_device_batch=batch, seq_len=context)
    return size(request, gen)


def run(args: argparse.Namespace) -> int:
    if size_traffic.wanted(args):  # a throughput target: cli/size_traffic.py answers
        model = resolve_model(args)
        with_model_defaults(args, model)
        return size_traffic.run(args, model)
    if args.tpu is None:  # every generation side by side (cli/size_compare.py)
        return size_compare.run(args, compute)
    result = compute(args)
    if result.recommended is None:
        largest = result.candidates[-1]
        raise UserError(
            "MODEL",
            result.model.id,
            f"fits no {result.generation} slice: needs {gib(largest.memory.total_bytes)}, the largest "
            f"({largest.shape.topology}) has {gib(largest.usable_bytes)} usable",
            f"try a generation with more HBM per chip (HBM per chip: {_hbm_table()})"
            + ("" if args.dtype != "bf16" or args.workload != "serve" else " or --dtype int8"),
        )
    if args.json:
        document = result.as_dict()
        document["capacity_prices"] = slice_prices(result.generation, result.recommended.shape.chips)
        document["sources"] = addresses(json.dumps(document))  # the address of every key the document cites
        print(json.dumps(document, indent=2))
    else:
        print(render(result))
    return 0


def _hbm_table() -> str:
    from tpu_stacks.catalog.tpu import GENERATIONS, Generation

    def one(g: Generation) -> str:
        documented = g.hbm_per_chip_as_documented
        # one unit in the line: GiB, as every other figure; Google's GB figure named as Google's
        said = f" (Google documents {documented})" if documented.endswith(" GB") else ""
        return f"{g.name} {gib(g.hbm_bytes_per_chip)}{said}"

    return ", ".join(one(g) for g in GENERATIONS)


def render(result: SizingResult) -> str:
    """The human table: candidates up to a few past the recommendation, then the breakdown."""
    recommended = result.recommended
    assert recommended is not None
    lines = [
        f"{result.model.id}: {result.model.params_text}, {result.workload} on {result.generation}",
        "",
        f"  {'topology':<10} {'machine type':<20} {'chips':>5} {'nodes':>5} {'usable HBM':>11} {'needs':>11}"
        f" {'fits':>4} {'headroom':>11} {'$/hour':>8}",
    ]
    shown = _shown(result.candidates, recommended)
    for candidate in shown:
        marker = ">" if candidate == recommended else " "
        price = f"{candidate.shape.hourly_usd:.2f}" if candidate.shape.hourly_usd is not None else "n/a"
        lines.append(
            f"{marker} {candidate.shape.topology:<10} {candidate.shape.machine_type:<20} {candidate.shape.chips:>5} "
            f"{candidate.shape.nodes:>5} {gib(candidate.usable_bytes):>11} {gib(candidate.memory.total_bytes):>11} "
            f"{'yes' if candidate.fits else 'no':>4} {gib(candidate.headroom_bytes):>11} {price:>8}"
        )
    hidden = len(result.candidates) - len(shown)
    if hidden:
        lines.append(f"  ... {hidden} larger slices fit as well (--json lists them)")
    lines += [
        "",
        f"Recommended: {recommended.shape.topology} on {recommended.shape.machine_type} "
        f"({recommended.shape.chips} chips, {recommended.shape.nodes} node{'s' if recommended.shape.nodes > 1 else ''})",  # noqa: E501
    ]
    lines += _capacity_lines(result.generation, recommended.shape.chips)
    if recommended.tensor_parallel_size:
        lines.append(_parallelism_line(serving_parallelism(recommended.shape)))
    lines.append(f"Memory: {breakdown(recommended.memory)} = {gib(recommended.memory.total_bytes)}")
    for part in recommended.memory.parts:
        lines.append(f"  {part.name:<12} {gib(part.bytes):>11}  {part.how}")
    lines += [f"Note: {note}" for note in recommended.memory.notes]
    lines.append("Assumptions:")
    lines += [f"  - {assumption}" for assumption in result.assumptions]
    cited = footnotes("\n".join(lines))  # a reader without this repository can open every key shown
    lines += ["Sources:", *(f"  {note}" for note in cited)] if cited else []
    return "\n".join(lines)


def _parallelism_line(plan: Parallelism) -> str:
    """One replica's layout: one host, or a multi-host slice served as one model (docs/vllm.md)."""
    layout = (
        f"{plan.hosts} hosts x {plan.chips_per_host} chips, one replica across the slice"
        if plan.multi_host
        else f"1 host x {plan.chips_per_host} chips"
    )
    sizes = f"tensor-parallel size {plan.tensor_parallel}, pipeline-parallel size {plan.pipeline_parallel}"
    return f"Parallelism: {layout}; {sizes}"


def _capacity_lines(generation_name: str, chips: int) -> list[str]:
    """The recommended slice's hourly price per capacity kind (docs/capacity.md), unknown where no source gives it."""
    lines = [f"Price per hour of this slice by capacity kind ({chips} chips; region-dependent, see {PRICING_URL}):"]
    labels: dict[object, str] = {kind: facts.label for kind, facts in KIND_FACTS.items()}  # keyed as prices name them
    for price in slice_prices(generation_name, chips):
        shown = f"${price['usd_per_hour']:.2f}" if price["usd_per_hour"] is not None else "unknown"
        dated = f", {price['as_of']}" if price["as_of"] else ""
        lines.append(f"  {labels[price['kind']]:<12} {shown:>9}  ({price['source']}{dated})")
    return lines


def _shown(candidates: tuple[Candidate, ...], recommended: Candidate) -> list[Candidate]:
    index = candidates.index(recommended)
    return list(candidates[: index + 1 + SHOWN_BEYOND_RECOMMENDED])
