"""catalog/models.py at its edges: the summary of a model's size, the gated-model refusal, a custom model's
refusals and parameter counts written with a unit, each against a figure found apart from the code."""

import pytest

from tpu_stacks.catalog import models
from tpu_stacks.catalog.models import ModelArchitecture, custom_model, lookup_model, parse_param_count
from tpu_stacks.errors import UserError


def test_the_size_summary_of_a_dense_model_and_of_a_mixture_of_experts():
    """Llama 3 8B: 8,030,261,248 parameters; Mixtral 8x7B: 46,702,792,704, of which 12,879,925,248 a token reads
    (tests/catalog/test_published_param_counts.py and test_model_shape_rules.py derive both from the indexes)."""
    llama = lookup_model("meta-llama/Meta-Llama-3-8B")
    mixtral = lookup_model("mistralai/Mixtral-8x7B-v0.1")
    assert llama.params_text == "8.03B params"
    assert mixtral.active_params == 12_879_925_248
    assert mixtral.params_text == "46.70B params (12.88B active per token)"


def test_a_gated_model_needs_a_token_and_an_open_one_does_not():
    """Meta's Llama repositories are gated on Hugging Face (catalogue.toml `gated = true`); Qwen's are not."""
    llama = lookup_model("meta-llama/Meta-Llama-3-8B")
    with pytest.raises(UserError, match=r"^hf_token is required: meta-llama/Meta-Llama-3-8B is gated on Hugging Face"):
        llama.require_token(False)
    assert llama.require_token(True) is None
    assert lookup_model("Qwen/Qwen2.5-7B-Instruct").require_token(False) is None


def test_a_saxml_alias_shows_the_models_first_saxml_path():
    model = ModelArchitecture(
        name="saxml-test",
        display_name="test",
        attention=None,
        aliases=("saxml.first.Path", "saxml.second.Path", "short"),
        source="test",
    )
    assert models._display_id(model, "short") == "saxml.first.Path"


@pytest.mark.parametrize("params", [0, -1, -0.5])
def test_a_custom_model_needs_a_positive_count(params):
    with pytest.raises(UserError, match=r"^model.params: "):
        custom_model("acme/x", params)
    with pytest.raises(UserError, match=r"^--params: "):
        custom_model("acme/x", params, params_key="--params")


def test_a_custom_model_of_one_parameter_and_one_of_everything():
    tiny = custom_model("acme/x", 1, layers=1, kv_heads=1, head_dim=1).architecture
    assert tiny.params == 1 and tiny.kv_bytes_per_token() == 2 * 2


@pytest.mark.parametrize("shape", [(0, 8, 128), (32, 0, 128), (32, 8, -1)])
def test_a_custom_shape_of_a_zero_or_negative_is_refused_naming_the_key(shape):
    with pytest.raises(UserError, match=r"^model.attention: .* is incomplete"):
        custom_model("acme/x", 7e9, *shape)


@pytest.mark.parametrize(
    ("text", "count"),
    [("2k", 2_000), ("350M", 350_000_000), ("7B", 7_000_000_000), ("1T", 10**12), ("1", 1), ("1e15", 10**15)],
)
def test_a_count_with_an_si_unit(text, count):
    """k, M, B (short-scale billion) and T are 10^3, 10^6, 10^9 and 10^12; a bare number counts parameters."""
    assert parse_param_count(text) == count


@pytest.mark.parametrize(
    ("text", "problem"),
    [("0", "is not a positive parameter count"), ("1000000000000001", "is not a positive parameter count")],
)
def test_a_count_of_none_or_beyond_a_quadrillion_is_refused(text, problem):
    with pytest.raises(UserError, match=problem):
        parse_param_count(text, "--params")
