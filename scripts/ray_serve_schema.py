"""Write the Serve config schema of the pinned Ray release as JSON, for the planner's offline checks.

`serveConfigV2` is a YAML string inside a RayService: the KubeRay CRD cannot see into it, and Ray itself
is too heavy a dependency for the planner (hundreds of MB, and Ray Serve LLM's builder needs vLLM). So
the schemas are generated once from the release itself and vendored:

- `serve_deploy_schema`: `ray.serve.schema.ServeDeploySchema` (what `serveConfigV2` is validated against
  by Ray's dashboard agent when KubeRay submits it);
- `llm_config`: `ray.serve.llm.LLMConfig` (each entry of `args.llm_configs` of an application built by
  `ray.serve.llm:build_openai_app`; pydantic with `extra="forbid"`, so an unknown key is an error in Ray);
- `deployment_options`: the keyword parameters of `ray.serve.deployment`, which `LLMConfig.deployment_config`
  is passed to (ray/llm/_internal/serve/core/server/builder.py: `serve.deployment(cls, **options)`; an
  unknown key is a TypeError there, after the cluster is up);
- `llm_serving_args_fields`: the fields of `LLMServingArgs` (the builder's `args`), read from the
  module's source with `ast`, because importing it needs vLLM or SGLang.

How: a throwaway virtualenv (deleted afterwards) gets `ray[serve]==RAY_SERVE_VERSION` from PyPI plus
the few pinned packages `ray.llm`'s config module imports; the pydantic models write their JSON
schemas (`model_json_schema()`). The version is tpu_stacks.catalog.ray_serve.RAY_SERVE_VERSION.

Rerun after changing that version (a few minutes; about 500 MB of disk while it runs):

    venv/bin/python scripts/ray_serve_schema.py

It writes tools/preview/tpu_stacks_preview/ray_serve/ray-serve-<version>.json and its row in
PROVENANCE.tsv there; commit both (tests/preview/test_serve_config.py checks the hash).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from tpu_stacks.catalog.ray_serve import RAY_SERVE_VERSION

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tools" / "preview" / "tpu_stacks_preview" / "ray_serve"
IMPORT_ONLY = ("pyarrow==26.0.1", "smart_open==9.0.2", "fsspec==2026.9.0", "jsonref==1.1.0", "pydantic==2.14.4")
"""What `ray.llm._internal.serve.core.configs.llm_config` imports beyond `ray[serve]` (not vLLM): pinned,
so the schemas do not change with a new pydantic."""
PROVENANCE_HEADER = ("file", "source", "version", "commit", "models", "sha256 prefix")

DUMP = r"""
import ast, inspect, json, sys
import ray
from ray.serve.schema import ServeDeploySchema
from ray import serve
from ray.llm._internal.serve.core.configs.llm_config import LLMConfig
import ray.llm._internal.serve.core.ingress as ingress

builder = ingress.__path__[0] + "/builder.py"
tree = ast.parse(open(builder, encoding="utf-8").read())
cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LLMServingArgs")
fields = sorted(s.target.id for s in cls.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
options = sorted(p for p in inspect.signature(serve.deployment).parameters if not p.startswith("_"))
json.dump(
    {
        "ray_version": ray.__version__,
        "ray_commit": ray.__commit__,
        "serve_deploy_schema": ServeDeploySchema.model_json_schema(),
        "llm_config": LLMConfig.model_json_schema(),
        "deployment_options": options,
        "llm_serving_args_fields": fields,
    },
    sys.stdout,
    sort_keys=True,
)
"""

MODELS = (
    "ray.serve.schema.ServeDeploySchema; ray.serve.llm.LLMConfig; ray.serve.deployment parameters; "
    "LLMServingArgs fields (ray/llm/_internal/serve/core/ingress/builder.py, ast)"
)


def generate(version: str, work: Path) -> dict[str, object]:
    """The schemas, dumped by the pinned release in a throwaway virtualenv under `work`."""
    import json

    env_dir = work / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run([*pip, f"ray[serve]=={version}", *IMPORT_ONLY], check=True)
    # cwd: an empty directory, so no file beside it shadows a module Ray imports.
    result = subprocess.run(
        [str(python), "-W", "ignore", "-c", DUMP], check=True, capture_output=True, text=True, cwd=work
    )
    data = json.loads(result.stdout)
    if data["ray_version"] != version:
        raise SystemExit(f"installed ray {data['ray_version']}, expected {version}")
    return data


def without_descriptions(node: object, in_properties: bool = False) -> object:
    """The schema without pydantic's `description` texts: validation does not read them, and they quote Ray's
    docstrings (`[DEPRECATED]` markers, links) that are no part of this repository. A property that happens
    to be named `description` is kept."""
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: without_descriptions(value, key in ("properties", "$defs"))
        for key, value in node.items()
        if in_properties or not (key == "description" and isinstance(value, str))
    }


def write(data: dict[str, object], out: Path) -> Path:
    import json

    data = {key: without_descriptions(value) for key, value in data.items()}
    out.mkdir(parents=True, exist_ok=True)
    version = str(data["ray_version"])
    path = out / f"ray-serve-{version}.json"
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    table = out / "PROVENANCE.tsv"
    rows: list[dict[str, str]] = []
    if table.is_file():
        with table.open(encoding="utf-8") as handle:
            rows = [r for r in csv.DictReader(handle, delimiter="\t") if r["file"] != path.name]
    rows.append(
        {
            "file": path.name,
            "source": f"pypi ray[serve]=={version} (scripts/ray_serve_schema.py)",
            "version": version,
            "commit": str(data["ray_commit"]),
            "models": MODELS,
            "sha256 prefix": f"sha256:{digest}",
        }
    )
    with table.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=PROVENANCE_HEADER, delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=RAY_SERVE_VERSION, help="Ray release (default: the pinned one)")
    parser.add_argument("--out", type=Path, default=OUT, help="directory of the vendored schemas")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ray-serve-schema-") as work:
        path = write(generate(args.version, Path(work)), args.out)
    print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
