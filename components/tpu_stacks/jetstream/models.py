"""Which catalogue models JetStream-PyTorch serves, and the names its manifests use for them.

The catalogue (`catalog/models.py`) knows the shapes; this table only adds what JetStream calls
them. Sources (keys resolve in docs/sources.md):
- converter `-m`, `-n` and the bucket directory for the tutorial's two models: [K-JETSTREAM-CONV] [V];
- server `--size` and `--model_name`: [K-JETSTREAM-CONV] [V];
- ids `jpt serve --model_id` accepts: jetstream-pytorch `jetstream_pt/fetch_models.py`
  (`model_id_to_class`, which also lists the base Gemma and the Llama 3 Instruct ids).
No upstream manifest gives converter arguments for the extra ids, so they serve only with the
download flow.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from tpu_stacks.catalog.models import ResolvedModel
from tpu_stacks.errors import UserError


class JetStreamModel(BaseModel):
    """One model as JetStream-PyTorch names it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hf_id: str
    """The catalogue's Hugging Face id; also the newer server's `--model_id`."""
    model_name: str
    """`--model_name` of the server and `-n` of the converter (`gemma`, `llama-3`)."""
    size: str
    """`--size` of the converter-flow server (`7b`, `8b`)."""
    checkpoint_dir: str | None = None
    """Directory under `gs://BUCKET/pytorch/` the converter writes (the tutorial's layout)."""
    converter_repo: str | None = None
    """The converter's `-m`: the Hugging Face repo it downloads (Gemma's PyTorch-format repo)."""

    @property
    def convertible(self) -> bool:
        return self.converter_repo is not None and self.checkpoint_dir is not None


MODELS: tuple[JetStreamModel, ...] = (
    JetStreamModel(
        hf_id="google/gemma-7b-it",
        model_name="gemma",
        size="7b",
        checkpoint_dir="gemma-7b-it",
        converter_repo="google/gemma-7b-it-pytorch",
    ),
    JetStreamModel(
        hf_id="meta-llama/Meta-Llama-3-8B",
        model_name="llama-3",
        size="8b",
        checkpoint_dir="llama-3-8b",
        converter_repo="meta-llama/Meta-Llama-3-8B",
    ),
    JetStreamModel(hf_id="google/gemma-7b", model_name="gemma", size="7b"),
    JetStreamModel(hf_id="meta-llama/Meta-Llama-3-8B-Instruct", model_name="llama-3", size="8b"),
)


def jetstream_model(model: ResolvedModel, needs_converter: bool, key: str = "jetstream.model") -> JetStreamModel:
    """The JetStream names of a catalogue model; UserError when JetStream (or its converter) lacks it."""
    for candidate in MODELS:
        if candidate.hf_id.lower() == model.id.lower():
            if needs_converter and not candidate.convertible:
                convertible = ", ".join(m.hf_id for m in MODELS if m.convertible)
                raise UserError(
                    key,
                    model.id,
                    "has no known checkpoint-converter arguments",
                    f"use flow: download, or a model the converter flow knows: {convertible}",
                )
            return candidate
    known = ", ".join(m.hf_id for m in MODELS)
    raise UserError(
        key,
        model.id,
        "is not served by JetStream-PyTorch",
        f"JetStream knows: {known}; for other models use VllmStack (tpu-stacks:vllm)",
    )
