"""The committed list of model classes vLLM TPU serves (catalog/engine_architectures.toml) is the one the pinned
wheels give: scripts/engine_architectures.py reads them again and compares. Network, like the other tests here: the
wheels come from PyPI into .upstream-cache/ (`make upstream`)."""

from __future__ import annotations

from scripts import engine_architectures


def test_the_committed_list_is_the_pinned_wheels():
    assert engine_architectures.main(["--check"]) == 0


def test_the_readers_find_the_catalogued_classes():
    text = engine_architectures.render(engine_architectures.CACHE)
    for name in ("LlamaForCausalLM", "Qwen3MoeForCausalLM", "Gemma2ForCausalLM", "MixtralForCausalLM"):
        assert f'"{name}"' in text
