"""jetstream/models.py: which catalogue models JetStream-PyTorch knows, and which of them the converter flow can
convert (the tutorial's two: [K-JETSTREAM-CONV] converts google/gemma-7b-it from its PyTorch repo and
meta-llama/Meta-Llama-3-8B; kubernetes-engine-samples at ae62563f, ai-ml/llm-serving-tpus-jetstream/pytorch)."""

from __future__ import annotations

import pytest

from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.errors import UserError
from tpu_stacks.jetstream.models import JetStreamModel, jetstream_model

CONVERTIBLE = "google/gemma-7b-it, meta-llama/Meta-Llama-3-8B"  # the tutorial's two converter Jobs


@pytest.mark.parametrize(
    ("checkpoint_dir", "converter_repo", "convertible"),
    [("d", "org/r", True), ("d", None, False), (None, "org/r", False), (None, None, False)],
)
def test_convertible_needs_both_the_directory_and_the_repo(checkpoint_dir, converter_repo, convertible) -> None:
    model = JetStreamModel(
        hf_id="org/m", model_name="gemma", size="7b", checkpoint_dir=checkpoint_dir, converter_repo=converter_repo
    )
    assert model.convertible is convertible


@pytest.mark.parametrize(
    ("hf_id", "name", "size"), [("google/gemma-7b-it", "gemma", "7b"), ("meta-llama/Meta-Llama-3-8B", "llama-3", "8b")]
)
def test_the_tutorials_models_convert(hf_id: str, name: str, size: str) -> None:
    """[K-JETSTREAM-CONV]: `-n=gemma` / `-n=llama-3`, `--size=7b` / `--size=8b`."""
    found = jetstream_model(lookup_model(hf_id), needs_converter=True)
    assert (found.hf_id, found.model_name, found.size) == (hf_id, name, size)


def test_the_id_is_matched_without_case() -> None:
    """The catalogue finds a model named in any case (catalog/models.py `lookup_model` compares lowered ids), so the
    JetStream names must be found the same way for the id the user wrote."""
    model = lookup_model("google/gemma-7b-it").model_copy(update={"id": "Google/Gemma-7B-IT"})
    assert jetstream_model(model, needs_converter=True).hf_id == "google/gemma-7b-it"


def test_a_model_without_converter_arguments_serves_only_by_download() -> None:
    model = lookup_model("google/gemma-7b")
    assert jetstream_model(model, needs_converter=False).model_name == "gemma"
    with pytest.raises(UserError) as caught:
        jetstream_model(model, needs_converter=True)
    assert str(caught.value) == (
        "jetstream.model: 'google/gemma-7b' has no known checkpoint-converter arguments; "
        f"use flow: download, or a model the converter flow knows: {CONVERTIBLE}"
    )


def test_a_model_jetstream_does_not_know_is_refused() -> None:
    with pytest.raises(UserError, match=r"^jetstream.model: 'Qwen/Qwen3-30B-A3B' is not served by JetStream-PyTorch"):
        jetstream_model(lookup_model("Qwen/Qwen3-30B-A3B"), needs_converter=False)
