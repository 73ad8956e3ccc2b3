"""Did-you-mean for a misspelled key: the section's own keys first, its required ones before the rest."""

from __future__ import annotations

import pytest

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.inputs.validation import parse, suggest
from tpu_stacks.jetstream.spec import JetStreamSpec
from tpu_stacks.vllm.spec import VllmSpec


@pytest.mark.parametrize(
    ("model", "typo", "location", "meant"),
    [
        # `mode` (registry.mode, a nested optional key) is closer by letters; `model` is the section's own
        # and required
        (VllmSpec, "modle", (), "model"),
        (VllmSpec, "mdoel", (), "model"),
        (VllmSpec, "tpuGenration", (), "tpuGeneration"),
        (VllmSpec, "maxModelLn", (), "maxModelLen"),
        (VllmSpec, "mod", ("registry",), "mode"),  # inside registry, `mode` is the key that section has
        (VllmSpec, "repositry", ("registry",), "repository"),
        (JetStreamSpec, "modle", (), "model"),
        (ClusterSpec, "nmae", (), "name"),
    ],
)
def test_suggestion_prefers_the_sections_keys(model: type, typo: str, location: tuple, meant: str) -> None:
    assert suggest(typo, model, location) == meant


def test_a_typo_far_from_every_key_gets_no_suggestion() -> None:
    assert suggest("zzzzzz", VllmSpec) is None


def test_the_refusal_names_the_required_key() -> None:
    with pytest.raises(UserError, match=r"^vllm\.modle: 'x' is not a known setting; did you mean 'model'\?$"):
        parse(VllmSpec, {"modle": "x"}, "vllm")
