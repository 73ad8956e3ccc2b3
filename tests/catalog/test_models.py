"""The model catalogue: counts computed from the shapes match the published counts."""

import pytest

from tpu_stacks.catalog import models
from tpu_stacks.errors import UserError

KiB, MiB = 1024, 1024**2

# name -> (params in billions per [MT], [SAX] and [PAX], KV bytes per token in bf16)
REFERENCE = {
    "meta-llama/Meta-Llama-3-8B": (8.03, 128 * KiB),
    "meta-llama/Llama-3.1-70B": (70.55, 320 * KiB),
    "meta-llama/Llama-3.1-405B": (405.85, 504 * KiB),
    "google/gemma-7b": (8.54, 448 * KiB),
    "google/gemma-2-9b": (9.24, 336 * KiB),
    "google/gemma-2-27b": (27.23, 368 * KiB),
    "mistralai/Mixtral-8x7B-v0.1": (46.70, 128 * KiB),
    models.SAXML_175B_TEST: (174.3, 4.5 * MiB),
    "Qwen/Qwen2.5-1.5B-Instruct": (1.5437, 28 * KiB),  # Hugging Face model card: 1.54B
}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_params_and_kv_match_the_reference(name):
    billions, kv_per_token = REFERENCE[name]
    model = models.lookup_model(name).architecture
    assert model.params / 1e9 == pytest.approx(billions, rel=3e-4)
    assert model.kv_bytes_per_token() == kv_per_token


def test_gemma_7b_matches_the_tech_report_split():
    """The report's 7,751,248,896 non-embedding parameters; its 786,825,216 embedding parameters count MaxText's
    padded vocabulary (256,128), the checkpoint's config.json has 256,000 rows."""
    gemma = models.lookup_model("google/gemma-7b").architecture
    embedding = gemma.vocab * gemma.d_model
    assert gemma.vocab == 256_000 and embedding == 786_432_000
    assert gemma.params - embedding == 7_751_248_896


def test_mixtral_active_params():
    assert models.lookup_model("mixtral-8x7b").architecture.active_params / 1e9 == pytest.approx(12.88, abs=0.01)


@pytest.mark.parametrize(
    "name,expected_id",
    [
        ("meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-70B"),
        ("META-LLAMA/LLAMA-3.1-70B", "meta-llama/Llama-3.1-70B"),
        ("llama3-8b", "meta-llama/Meta-Llama-3-8B"),
        ("google/gemma-7b-it", "google/gemma-7b-it"),
        ("gemma-7b-it", "google/gemma-7b-it"),
        ("saxml.server.pax.lm.params.lm_cloud.LmCloudSpmd175B32Test", models.SAXML_175B_TEST),
        ("LmCloudSpmd175B32Test", models.SAXML_175B_TEST),
        ("mistralai/Mixtral-8x7B-v0.1", "mistralai/Mixtral-8x7B-v0.1"),
        ("google/gemma-2-27b", "google/gemma-2-27b"),
    ],
)
def test_lookup_by_id_path_and_alias(name, expected_id):
    assert models.lookup_model(name).id == expected_id


def test_unknown_model_is_one_short_line_with_the_nearest_name_and_where_the_others_are():
    with pytest.raises(UserError) as e:
        models.lookup_model("gemma-7")
    assert str(e.value) == (
        "model: 'gemma-7' is not in the model catalogue; did you mean 'gemma-7b'? "
        "any Hugging Face model: `tpu-stacks models fetch ORG/NAME`, or give its config.json as modelConfig"
    )
    with pytest.raises(UserError, match=r"did you mean 'meta-llama/Llama-3.1-8B-Instruct'\?"):
        models.lookup_model("Meta-Llama/llama-3.1-8b-instuct")  # case and a typo
    with pytest.raises(UserError) as e:
        models.lookup_model("acme/unknown-13b")
    message = str(e.value)
    assert message.startswith("model: 'acme/unknown-13b' is not in the model catalogue; any Hugging Face model")
    assert "did you mean" not in message  # nothing near it
    assert len(message.splitlines()) == 1 and len(message) < 200  # not every name (1,300 characters)


def test_the_suggestion_is_a_name_the_catalogue_accepts():
    for typo in ("llama3-8", "gemma-2-27", "mixtral-8x7b-v0", "saxml-175"):
        close = models.closest_model_name(typo)
        assert close is not None and models.lookup_model(close)
    assert models.closest_model_name("zzzz") is None


def test_a_count_below_one_parameter_is_refused_under_the_key_given():
    with pytest.raises(UserError, match=r"^--params: '0.5' is less than one parameter; write the unit"):
        models.parse_param_count("0.5", "--params")
    assert models.parse_param_count("0.5B") == 500_000_000


def test_sliding_window_layers_keep_fewer_tokens():
    attention = models.lookup_model("google/gemma-2-9b").architecture.attention
    short = attention.kv_bytes(4096, 1, 2)
    long = attention.kv_bytes(8192, 1, 2)
    # doubling the context doubles only the 21 global layers' share
    assert long - short == attention.kv_bytes(4096, 1, 2) // 2


def test_custom_model():
    custom = models.custom_model("acme-7b", models.parse_param_count("7B"), 32, 8, 128)
    assert custom.params == 7_000_000_000
    assert custom.architecture.kv_bytes_per_token() == 128 * KiB
    assert models.custom_model("acme", 1e9).architecture.kv_bytes_per_token() is None
    with pytest.raises(UserError, match="give layers, kv_heads and head_dim together"):
        models.custom_model("acme", 1e9, layers=32)
    with pytest.raises(UserError, match="is not a parameter count"):
        models.parse_param_count("seven")
    with pytest.raises(UserError, match="is not a positive parameter count"):
        models.parse_param_count("-3B")


def test_dtype_bytes():
    assert models.dtype_bytes("int4") == 0.5
    with pytest.raises(UserError, match="dtype: 'fp64' is not a supported dtype"):
        models.dtype_bytes("fp64")


def test_gated_models_are_marked():
    assert models.lookup_model("meta-llama/Llama-3.1-70B").architecture.gated
    assert models.lookup_model("google/gemma-7b-it").architecture.gated
    assert not models.lookup_model("Qwen/Qwen2.5-1.5B-Instruct").architecture.gated


def test_a_fixed_mesh_is_a_model_fact():
    assert models.lookup_model(models.SAXML_175B_TEST).architecture.mesh_devices == 32
    assert models.lookup_model("meta-llama/Llama-3.1-70B").architecture.mesh_devices is None
