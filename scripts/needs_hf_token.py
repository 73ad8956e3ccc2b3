"""Does a shipped stack need the repository's HF_TOKEN secret? CI asks before its cloud preview, and skips
the stack with a notice when the answer is yes and the repository has no token (.github/workflows/preview.yml).

Yes when the stack's workload takes a Hugging Face token (the registry: a secret handed to the component
input `hf_token`, the input the catalogue's `require_token` consults), its model is gated (the catalogue),
and the stack file supplies no token itself (a `secure:` value of that key, or a Pulumi ESC environment).
Nothing is listed here: a new gated stack is gated in CI the day it is added.

    venv/bin/python scripts/needs_hf_token.py vllm     # prints true or false
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.errors import UserError
from tpu_stacks.registry import workloads

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "tpu-stacks"
TOKEN_INPUT = "hf_token"
"""The component input of the Hugging Face token (each serving workload's `secrets`)."""


def needs_hf_token(stack_file: Path) -> bool:
    document: dict[str, Any] = yaml.safe_load(stack_file.read_text()) or {}
    if document.get("environment"):  # an ESC environment supplies the stack's secrets
        return False
    config: dict[str, Any] = document.get("config") or {}
    chosen = next((w for w in workloads() if w.name == config.get(f"{NAMESPACE}:scenario")), None)
    token_key = dict(chosen.secrets).get(TOKEN_INPUT) if chosen else None
    if token_key is None or f"{NAMESPACE}:{token_key}" in config:
        return False
    section = config.get(f"{NAMESPACE}:{chosen.section}") or {}
    model = section.get("model") if isinstance(section, dict) else None
    try:
        return isinstance(model, str) and lookup_model(model).architecture.gated
    except UserError:  # not a catalogue model: the offline plan before this says what is wrong
        return False


def gated_stacks(root: Path = ROOT) -> list[str]:
    """The shipped stacks that need the token, by name."""
    return sorted(
        path.name[len("Pulumi.") : -len(".yaml")] for path in root.glob("Pulumi.*.yaml") if needs_hf_token(path)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stack", help="the stack name (Pulumi.<stack>.yaml)")
    args = parser.parse_args(argv)
    print("true" if needs_hf_token(ROOT / f"Pulumi.{args.stack}.yaml") else "false")
    return 0


if __name__ == "__main__":
    sys.exit(main())
