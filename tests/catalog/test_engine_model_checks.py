"""catalog/engine_models.check_architecture: each engine's own refusal of a model class, and none for an engine
that declares no check (JetStream names its models one by one in jetstream/models.py)."""

import json

import pytest

from tpu_stacks.catalog.engine_models import architecture_checks, check_architecture
from tpu_stacks.catalog.hf_config import architecture_from_config
from tpu_stacks.catalog.model_catalogue import CONFIG_DIR
from tpu_stacks.errors import UserError

QWEN25_7B = json.loads((CONFIG_DIR / "Qwen/Qwen2.5-7B-Instruct/config.json").read_text())
UNKNOWN_CLASS = architecture_from_config(
    {**QWEN25_7B, "architectures": ["AcmeForCausalLM"]}, name="acme/x", source="test"
)


def test_vllm_refuses_a_class_its_pinned_release_has_not():
    with pytest.raises(UserError, match=r"^vllm.model: 'acme/x' is a AcmeForCausalLM"):
        check_architecture("vllm", UNKNOWN_CLASS, "vllm.model", "acme/x")


def test_an_engine_without_a_check_judges_no_class():
    assert "jetstream" not in architecture_checks()
    assert check_architecture("jetstream", UNKNOWN_CLASS, "jetstream.model", "acme/x") is None
