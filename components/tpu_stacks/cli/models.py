"""`tpu-stacks models`: the model catalogue a stack's `model` key and `tpu-stacks size` accept.

Every name a model answers to (its Hugging Face ids, its aliases, a Saxml path), its size and whether
Hugging Face gates it (a gated model needs `tpu-stacks:hfToken` and an accepted licence), so the first
question of a new user, "which models can I name?", has an answer without reading the code. Any other Hugging Face
model: `tpu-stacks models fetch ORG/NAME` saves its config.json under models/ (cli/models_fetch.py), where `plan` and
`size` find it.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from tpu_stacks.catalog.models import MODELS, ModelArchitecture, accepted_names
from tpu_stacks.cli.models_fetch import HF_PAGE, fetch
from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.sizing import gib
from tpu_stacks.sources import addresses, footnotes

BF16_BYTES = 2
OTHER_MODELS = (
    "other models: tpu-stacks models fetch ORG/NAME (saves its config.json under models/), or a config.json as "
    "modelConfig / size --model-config"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=["fetch"], help="fetch: save a model's config.json under models/")
    parser.add_argument("name", nargs="?", metavar="MODEL", help="fetch: the Hugging Face id, ORG/NAME")
    parser.add_argument("--revision", default="main", help="fetch: the branch, tag or commit (main)")
    parser.add_argument("--project", default=".", help="fetch: the project directory that holds models/ (.)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")


def entry(model: ModelArchitecture) -> dict[str, Any]:
    """One model as `--json` prints it; the text table shows the same fields."""
    names = accepted_names(model)
    shown = model.hf_id or next((a for a in model.aliases if a.startswith("saxml.")), model.name)
    return {
        "id": shown,
        "names": names,
        "display_name": model.display_name,
        "params": model.params,
        "active_params": model.active_params,
        "architecture": model.architecture,
        "max_context": model.max_context,
        "bf16_weights_gib": round(model.params * BF16_BYTES / 1024**3, 1),
        "gated": model.gated,
        "page": HF_PAGE.format(model.hf_id) if model.hf_id else None,
        "source": model.source,
    }


def render() -> str:
    """The text table, one model per line with its other names under it, then the sources it cites."""
    items = [entry(model) for model in MODELS]
    width = max(len(item["id"]) for item in items)
    lines = [f"{'model':<{width}} {'params':>8} {'bf16 weights':>13}  gated"]
    for model, item in zip(MODELS, items, strict=True):
        gated = "yes (tpu-stacks:hfToken)" if model.gated else "no"
        lines.append(f"{item['id']:<{width}} {model.params / 1e9:>7.2f}B {gib(model.params * BF16_BYTES):>13}  {gated}")
        others = [name for name in item["names"] if name != item["id"]]
        lines.append(f"  also: {', '.join(others)}")
        lines.append(f"  {item['page'] or 'no Hugging Face page'}; shape: {model.source}")
    lines += ["", OTHER_MODELS]
    cited = footnotes("\n".join(lines))
    lines += ["Sources:", *(f"  {note}" for note in cited)] if cited else []
    return "\n".join(lines)


def _fetch(args: argparse.Namespace) -> int:
    if not args.name:
        raise UserError("MODEL", MISSING, "is required by fetch", "write tpu-stacks models fetch ORG/NAME")
    saved = fetch(args.name, Path(args.project), revision=args.revision)
    if args.json:
        print(json.dumps(saved, indent=2))
        return 0
    if saved["checkpoint_bytes"] and all(s["weight_bytes"] for s in saved["served"].values()):
        exact = _served_text(saved["served"])
    elif saved["checkpoint_bytes"]:
        exact = "no dtype in config.json: weights sized from the parameter count"
    else:
        exact = "no safetensors index"
    active = f", {saved['active_params'] / 1e9:.2f}B active" if saved["active_params"] != saved["params"] else ""
    print(
        f"saved {saved['directory']}: {saved['architecture']}, {saved['params'] / 1e9:.2f}B params{active}, {exact}"
        + ("; gated: the stack needs tpu-stacks:hfToken" if saved["gated"] else "")
    )
    return 0


def _served_text(served: dict[str, dict]) -> str:
    """`N bytes of bf16 weights` when every engine holds the same; else each engine's (`models fetch`)."""
    figures = {(s["weight_bytes"], s["weight_dtype"]) for s in served.values()}
    if len(figures) == 1:
        ((size, dtype),) = figures
        return f"{size:,} bytes of {dtype} weights"
    return ", ".join(f"{s['weight_bytes']:,} bytes of {s['weight_dtype']} weights in {e}" for e, s in served.items())


def run(args: argparse.Namespace) -> int:
    if args.action == "fetch":
        return _fetch(args)
    if args.json:
        document = {"models": [entry(model) for model in MODELS], "other_models": OTHER_MODELS}
        document["sources"] = addresses(json.dumps(document))
        print(json.dumps(document, indent=2))
    else:
        print(render())
    return 0
