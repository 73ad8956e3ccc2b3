"""Where a model's config.json comes from: the catalogue's, the project's `models/`, or a path the user names.

One path for every model: a name resolves to a config.json, which `catalog/hf_config.py` reads.
- The catalogue: `catalog/hf_configs/catalogue.toml` lists the config.json files tpu-stacks ships (with the ids and
  aliases each answers to, whether Hugging Face gates it, and where the file is published).
- The project: `models/<org>/<name>/config.json` under the directory a command runs in (a Pulumi program runs in
  its project directory), which `tpu-stacks models fetch ORG/NAME` writes with `model.safetensors.index.json`
  beside it (the checkpoint's exact bytes).
- A path: a workload's `modelConfig` or `size --model-config`, relative to that directory.
The Saxml test model (`LmCloudSpmd175B32Test`) has no config.json: it is the one record written here in code, from
[SAX] lm_cloud.py (LmCloudSpmd175B32Test -> LmCloudSpmd175B) and [PAX] model_params.py.
"""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from tpu_stacks.catalog.hf_config import architecture_from_config, index_total_size, read_json
from tpu_stacks.catalog.model_shape import Attention, ModelArchitecture
from tpu_stacks.catalog.upstream import number

CONFIG_DIR = Path(__file__).parent / "hf_configs"
PROJECT_MODELS = Path("models")
"""`models/<org>/<name>/` under the project directory: where `tpu-stacks models fetch` saves a model's files."""
CONFIG_FILE = "config.json"
INDEX_FILE = "model.safetensors.index.json"
FETCHED_FILE = "fetched.json"
"""What `models fetch` records beside the files: where they came from and whether they needed a token."""

SAXML_175B_TEST = "saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test"
SAXML_TEST_MODEL = ModelArchitecture(
    name="saxml-lmcloudspmd175b32test",
    display_name="Saxml LmCloudSpmd175B32Test (175B test model)",
    aliases=(SAXML_175B_TEST, "LmCloudSpmd175B32Test", "saxml-175b", "175b-test"),
    attention=Attention(layers=96, kv_heads=96, head_dim=128, query_heads=96),
    d_model=12288,
    d_ff=49152,
    # Inherited unchanged down to paxml's TransformerLmSpmdAdafactor (ledger: saxml.test-model.inherits,
    # saxml.lmcloudspmd2b.base, paxml.lmcloudspmd.base, paxml.lm-spmd-adafactor.vocab-size).
    vocab=number("paxml.lm-spmd-adafactor.vocab-size"),
    tied_embeddings=True,
    gated_mlp=False,
    mesh_devices=32,  # ICI_MESH_SHAPE = [1, 1, 32] [SAX]
    catalogued=True,
    source="[SAX] lm_cloud.py (LmCloudSpmd175B32Test -> LmCloudSpmd175B), [PAX] model_params.py",
)


@cache
def catalogued_models() -> tuple[ModelArchitecture, ...]:
    """Every catalogued model: each config.json of catalogue.toml, read by the one parser, and the Saxml test model."""
    manifest = tomllib.loads((CONFIG_DIR / "catalogue.toml").read_text())
    models = []
    for entry in manifest["model"]:
        config = read_json(CONFIG_DIR / entry["config"], entry["name"])
        models.append(
            architecture_from_config(
                config,
                name=entry["name"],
                display_name=entry["display_name"],
                hf_ids=tuple(entry["hf_ids"]),
                aliases=tuple(entry.get("aliases", ())),
                gated=entry.get("gated", False),
                catalogued=True,
                source=f"config.json: {entry['source']}",
            )
        )
    return (*models, SAXML_TEST_MODEL)


def project_config(model_id: str, root: Path | None = None) -> Path | None:
    """`models/<org>/<name>/config.json` for `model_id` under `root` (the working directory), if it exists."""
    if "/" not in model_id or ".." in model_id.split("/"):
        return None
    path = (root or Path.cwd()) / PROJECT_MODELS / model_id / CONFIG_FILE
    try:
        return path if path.is_file() else None
    except OSError:  # a name no file system holds (too long): no such folder, so not the project's model
        return None


def from_file(model_id: str, path: Path, key: str) -> ModelArchitecture:
    """The model a config.json file describes, with the exact weight bytes of the index file beside it and, when
    `models fetch` saved it, whether Hugging Face gates it (its `fetched.json`)."""
    config = read_json(path, key)
    fetched = path.parent / FETCHED_FILE
    gated = bool(read_json(fetched, str(fetched)).get("gated")) if fetched.is_file() else False
    return architecture_from_config(
        config,
        name=model_id,
        hf_ids=(model_id,) if "/" in model_id else (),
        gated=gated,
        weight_bytes=index_total_size(path.parent / INDEX_FILE),
        source=f"config.json: {path}",
    )
