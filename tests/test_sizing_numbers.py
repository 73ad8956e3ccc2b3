"""The memory model pinned to numbers worked out by hand, term by term.

`test_sizing.py` checks the tutorials' choices; these tests pin each term of the model to a value
computed here from the published formula, on a toy model whose numbers are small enough to check
on paper (so a changed constant, operator or default fails a test, as mutation testing showed it
did not). Sources:
- [SB] inference.md: KV cache = 2 (K and V) x bytes x head_dim x kv_heads x layers x tokens.
- [SB] applied-training.md: training activations with three
  checkpoints per layer = 2 x L x tokens x (D + 2F) bytes in bf16; the logits of every token are
  kept in fp32 (4 bytes x vocab per token).
- [MT] base.yml: fp32 weights, fp32 gradients, AdamW's two moments in the
  weight dtype: 4 + 4 + 2 x 4 = 16 bytes per parameter.
- [D-v6e], [D-7x]: v6e 32 GB per chip, one JAX device per chip; tpu7x 192 GiB per chip,
  two JAX devices per chip. 90% usable HBM (under vLLM 0.29.0's default --gpu-memory-utilization 0.92).
"""

import pydantic
import pytest

from tpu_stacks import sizing
from tpu_stacks.catalog.models import Attention, ModelArchitecture, ResolvedModel
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.errors import UserError

MiB, GiB, GB = 1024**2, 1024**3, 10**9
RESERVE = 512 * MiB  # runtime reserve per chip, the model's documented assumption
PARAMS = 1_000_000
LAYERS, KV_HEADS, HEAD_DIM, D_MODEL, D_FF, VOCAB = 2, 1, 4, 8, 16, 10


def toy(**changes) -> ResolvedModel:
    """1M parameters, 2 layers, 1 KV head of dim 4, d_model 8, d_ff 16, vocab 10."""
    fields = dict(
        name="toy",
        display_name="toy",
        attention=Attention(layers=LAYERS, kv_heads=KV_HEADS, head_dim=HEAD_DIM),
        d_model=D_MODEL,
        d_ff=D_FF,
        vocab=VOCAB,
        declared_params=PARAMS,
        source="test",
    )
    fields.update(changes)
    return ResolvedModel(id="toy", architecture=ModelArchitecture(**fields))


V6E_1 = slice_shape("v6e", "1x1")
V6E_8 = slice_shape("v6e", "2x4")
TPU7X_1 = slice_shape("tpu7x", "1x1x1")


# -- usable HBM ------------------------------------------------------------------------------------


def test_usable_hbm_is_ninety_percent_of_the_slice():
    assert sizing.usable_bytes(V6E_1) == 28_800_000_000  # 0.9 x 32 GB
    assert sizing.usable_bytes(V6E_8) == 230_400_000_000  # 0.9 x 8 x 32 GB


def test_a_request_that_needs_exactly_the_usable_bytes_fits():
    memory = sizing.MemoryEstimate(
        workload="serve", parts=(sizing.MemoryPart(name="weights", bytes=100, how="-"),)
    )  # fmt: skip
    exact = sizing.Candidate(shape=V6E_1, memory=memory, usable_bytes=100, tensor_parallel_size=1)
    short = sizing.Candidate(shape=V6E_1, memory=memory, usable_bytes=99, tensor_parallel_size=1)
    assert exact.fits and exact.headroom_bytes == 0
    assert not short.fits and short.headroom_bytes == -1


# -- serving ---------------------------------------------------------------------------------------


def test_serving_terms_on_one_chip():
    request = sizing.ServingRequest(model=toy(), context=100, batch=3, prefill_tokens=1000)
    memory = sizing.serving_memory(request, V6E_1)
    assert memory.part("weights") == PARAMS * 2  # bf16
    # KV: 2 x 2 bytes x head_dim 4 x 1 KV head x 2 layers x 100 tokens x 3 sequences
    assert memory.part("kv_cache") == 2 * 2 * 4 * 1 * 2 * 100 * 3 == 9600
    # overhead: 512 MiB + min(1000 prefill tokens, 300 tokens held) x (8 + 16) x 2 bytes x 2
    assert memory.part("overhead") == RESERVE + 300 * 24 * 4
    assert memory.total_bytes == 2_000_000 + 9600 + RESERVE + 28_800
    assert memory.notes == ()


def test_prefill_step_is_capped_by_the_prefill_tokens():
    request = sizing.ServingRequest(model=toy(), context=1000, batch=2, prefill_tokens=50)
    assert sizing.serving_memory(request, V6E_1).part("overhead") == RESERVE + 50 * 24 * 4


def test_reserve_is_per_chip_and_kv_replicates_past_the_kv_heads():
    request = sizing.ServingRequest(model=toy(), context=10, batch=1, prefill_tokens=10)
    memory = sizing.serving_memory(request, V6E_8)
    assert memory.part("overhead") == 8 * RESERVE + 10 * 24 * 4
    # tp 8 over 1 KV head: each head replicated on 8 chips
    assert memory.part("kv_cache") == 8 * (2 * 2 * 4 * 1 * 2 * 10)
    assert memory.notes == ("tensor parallel 8 > 1 KV heads: KV cache replicated x8",)


def test_no_replication_note_when_tp_equals_the_kv_heads():
    request = sizing.ServingRequest(model=toy(attention=Attention(layers=2, kv_heads=8, head_dim=4)), context=10)
    memory = sizing.serving_memory(request, V6E_8)
    assert memory.part("kv_cache") == 2 * 2 * 4 * 8 * 2 * 10
    assert memory.notes == ()


def test_int8_weights_and_kv():
    request = sizing.ServingRequest(model=toy(), weight_dtype="int8", kv_dtype="int8", context=10)
    memory = sizing.serving_memory(request, V6E_1)
    assert memory.part("weights") == PARAMS
    assert memory.part("kv_cache") == 2 * 1 * 4 * 1 * 2 * 10


def test_a_model_without_a_shape_counts_weights_and_the_reserve_only():
    request = sizing.ServingRequest(model=toy(attention=None, d_model=None, d_ff=None), context=10)
    memory = sizing.serving_memory(request, V6E_1)
    assert (memory.part("weights"), memory.part("kv_cache"), memory.part("overhead")) == (2 * PARAMS, 0, RESERVE)
    assert "KV cache not counted" in memory.notes[0]


@pytest.mark.parametrize("missing", ["d_model", "d_ff"])
def test_prefill_activations_need_both_widths(missing):
    request = sizing.ServingRequest(model=toy(**{missing: None}), context=10)
    assert sizing.serving_memory(request, V6E_1).part("overhead") == RESERVE


def test_serving_defaults():
    request = sizing.ServingRequest(model=toy())
    assert (request.engine, request.weight_dtype, request.kv_dtype) == ("vllm", "bf16", "bf16")
    assert (request.context, request.batch, request.prefill_tokens) == (8192, 1, 8192)
    # one sequence of 8192 tokens held by default
    assert sizing.serving_memory(request, V6E_1).part("kv_cache") == 2 * 2 * 4 * 1 * 2 * 8192


@pytest.mark.parametrize("field", ["context", "batch", "prefill_tokens"])
def test_serving_counts_must_be_positive(field):
    assert getattr(sizing.ServingRequest(model=toy(), **{field: 1}), field) == 1
    for bad in (0, -1):
        with pytest.raises(pydantic.ValidationError, match=field):
            sizing.ServingRequest(model=toy(), **{field: bad})


# -- training --------------------------------------------------------------------------------------


def test_training_terms_with_maxtexts_defaults():
    request = sizing.TrainingRequest(model=toy(), per_device_batch=1, seq_len=4)
    memory = sizing.training_memory(request, V6E_1)
    assert memory.part("weights") == 4 * PARAMS
    assert memory.part("gradients") == 4 * PARAMS
    assert memory.part("optimizer") == 8 * PARAMS  # AdamW: 2 moments x fp32
    # 4 tokens: 2 bytes x 2 layers x 4 x (8 + 2 x 16) = 640, + 4 tokens x 10 vocab x 4 bytes = 160
    assert memory.part("activations") == 640 + 160
    assert memory.part("overhead") == RESERVE
    assert memory.total_bytes == 16 * PARAMS + 800 + RESERVE
    assert memory.notes == ()


def test_training_tokens_count_every_jax_device_and_the_reserve_every_chip():
    request = sizing.TrainingRequest(model=toy(), per_device_batch=2, seq_len=4)
    eight = sizing.training_memory(request, V6E_8)
    # 2 x 4 x 8 devices = 64 tokens in flight
    assert eight.part("activations") == 2 * 2 * 64 * 40 + 64 * 10 * 4
    assert eight.part("overhead") == 8 * RESERVE
    ironwood = sizing.training_memory(request, TPU7X_1)
    # one tpu7x chip is two JAX devices: 16 tokens, one chip's reserve
    assert ironwood.part("activations") == 2 * 2 * 16 * 40 + 16 * 10 * 4
    assert ironwood.part("overhead") == RESERVE


def test_a_fractional_per_device_batch():
    request = sizing.TrainingRequest(model=toy(), per_device_batch=0.5, seq_len=4)
    # 0.5 x 4 x 8 devices = 16 tokens
    assert sizing.training_memory(request, V6E_8).part("activations") == 2 * 2 * 16 * 40 + 16 * 10 * 4


def test_bf16_state_and_activations_in_fp32():
    request = sizing.TrainingRequest(
        model=toy(), seq_len=4, weight_dtype="bf16", grad_dtype="bf16", moment_dtype="bf16", activation_dtype="fp32"
    )
    memory = sizing.training_memory(request, V6E_1)
    assert (memory.part("weights"), memory.part("gradients"), memory.part("optimizer")) == (
        2 * PARAMS,
        2 * PARAMS,
        2 * 2 * PARAMS,
    )
    assert memory.part("activations") == 4 * 2 * 4 * 40 + 160


def test_a_model_without_a_vocabulary_has_no_logits_term():
    request = sizing.TrainingRequest(model=toy(vocab=None), seq_len=4)
    assert sizing.training_memory(request, V6E_1).part("activations") == 640


@pytest.mark.parametrize(
    "optimizer,moments",
    [("adamw", 2), ("adam", 2), ("sgd", 0), ("adafactor", 0)],  # Adam's m and v; SGD none; Adafactor factored
)
def test_each_optimizer_state(optimizer, moments):
    request = sizing.TrainingRequest(model=toy(), seq_len=4, optimizer=optimizer)
    memory = sizing.training_memory(request, V6E_1)
    assert memory.part("optimizer") == moments * 4 * PARAMS
    assert f"{optimizer}: {moments} moments x fp32" in [p.how for p in memory.parts]


@pytest.mark.parametrize("missing", [{"attention": None}, {"d_model": None}, {"d_ff": None}])
def test_training_without_the_shape_counts_no_activations(missing):
    memory = sizing.training_memory(sizing.TrainingRequest(model=toy(**missing), seq_len=4), V6E_1)
    assert memory.part("activations") == 0
    assert memory.notes == ("model shape unknown: activations not counted",)


@pytest.mark.parametrize("key", ["weight_dtype", "grad_dtype", "moment_dtype"])
def test_training_dtypes_other_than_fp32_and_bf16_are_refused(key):
    with pytest.raises(UserError, match=f"^{key}: 'int8' is not a training dtype; valid: fp32, bf16$"):
        sizing.training_memory(sizing.TrainingRequest(model=toy(), **{key: "int8"}), V6E_1)


def test_an_unknown_optimizer_is_refused():
    with pytest.raises(UserError, match=r"^optimizer: 'lion' is not a known optimizer; valid: adamw, adam, sgd"):
        sizing.training_memory(sizing.TrainingRequest(model=toy(), optimizer="lion"), V6E_1)


def test_training_defaults():
    request = sizing.TrainingRequest(model=toy())
    assert (request.per_device_batch, request.seq_len, request.optimizer) == (1, 4096, "adamw")
    assert (request.weight_dtype, request.grad_dtype, request.moment_dtype, request.activation_dtype) == (
        "fp32",
        "fp32",
        "fp32",
        "bf16",
    )


@pytest.mark.parametrize("field,smallest", [("per_device_batch", 0.25), ("seq_len", 1)])
def test_training_counts_must_be_positive(field, smallest):
    assert getattr(sizing.TrainingRequest(model=toy(), **{field: smallest}), field) == smallest
    for bad in (0, -1):
        with pytest.raises(pydantic.ValidationError, match=field):
            sizing.TrainingRequest(model=toy(), **{field: bad})


# -- results ---------------------------------------------------------------------------------------


def test_as_dict_of_a_training_estimate_names_every_part():
    memory = sizing.training_memory(sizing.TrainingRequest(model=toy(), seq_len=4), V6E_1)
    assert memory.as_dict() == {
        "weights_bytes": 4 * PARAMS,
        "gradients_bytes": 4 * PARAMS,
        "optimizer_bytes": 8 * PARAMS,
        "activations_bytes": 800,
        "overhead_bytes": RESERVE,
        "kv_cache_bytes": 0,
        "total_bytes": 16 * PARAMS + 800 + RESERVE,
    }


def test_memory_describes_the_recommended_slice():
    # 20 GB of bf16 weights: v6e 1x1 (28.8 GB usable) holds them; larger slices add reserve per chip
    big = toy(declared_params=10 * GB)
    result = sizing.size(sizing.ServingRequest(model=big, context=10), "v6e")
    assert result.recommended.shape.topology == "1x1"
    assert result.memory.part("overhead") == RESERVE + 10 * 24 * 4
    assert result.as_dict()["memory"]["overhead_bytes"] == RESERVE + 10 * 24 * 4
    assert result.as_dict()["recommended"]["topology"] == "1x1"


def test_memory_of_a_model_no_slice_holds_is_the_largest_slices():
    huge = toy(declared_params=10**15)
    result = sizing.size(sizing.ServingRequest(model=huge, context=10), "v6e")
    assert result.recommended is None and result.as_dict()["recommended"] is None
    assert result.memory.part("overhead") == 256 * RESERVE + 10 * 24 * 4  # 16x16
    with pytest.raises(UserError, match=r"^model: 'toy' fits no v6e slice: needs .* but the largest \(16x16\)"):
        sizing.smallest_fit(sizing.ServingRequest(model=huge, context=10), "v6e")


def test_candidate_and_result_as_dict():
    result = sizing.size(sizing.ServingRequest(model=toy(), context=10), "v6e")
    first = result.as_dict()["candidates"][0]
    memory = sizing.serving_memory(sizing.ServingRequest(model=toy(), context=10), V6E_1)
    assert first == {
        "topology": "1x1",
        "machine_type": "ct6e-standard-1t",
        "chips": 1,
        "nodes": 1,
        "hbm_bytes": 32 * GB,
        "usable_bytes": 28_800_000_000,
        "fits": True,
        "headroom_bytes": 28_800_000_000 - memory.total_bytes,
        "hourly_usd": 2.7,
        "tensor_parallel_size": 1,
        "hosts": 1,
        "chips_per_host": 1,
        "tensor_parallel": 1,
        "pipeline_parallel": 1,
    }
    document = result.as_dict()
    assert (document["model"], document["generation"], document["workload"], document["params"]) == (
        "toy",
        "v6e",
        "serve",
        PARAMS,
    )
    assert document["assumptions"] == list(sizing.ASSUMPTIONS["serve"])
    training = sizing.size(sizing.TrainingRequest(model=toy(), seq_len=4), "v6e")
    assert training.workload == "train" and training.candidates[0].tensor_parallel_size is None


def test_choose_slice_and_check_fits_return_the_verdict():
    request = sizing.ServingRequest(model=toy(), context=10)
    chosen = sizing.choose_slice(request, generation("v6e"), None, "vllm")
    assert chosen.shape.topology == "1x1" and chosen.fits
    given = sizing.choose_slice(request, generation("v6e"), "2x4", "vllm")
    assert given.shape.topology == "2x4" and given.tensor_parallel_size == 8
    assert sizing.check_fits(request, V6E_8).usable_bytes == 230_400_000_000


def test_a_slice_too_small_when_nothing_fits_says_why():
    request = sizing.ServingRequest(model=toy(declared_params=10**15), context=10)
    with pytest.raises(UserError) as error:
        sizing.check_fits(request, V6E_1)
    assert error.value.fix.startswith("fits no v6e slice: needs")


def test_gib_and_breakdown():
    assert sizing.gib(3 * GiB) == "3.0 GiB"
    assert sizing.gib(GiB // 2) == "0.5 GiB"
    memory = sizing.serving_memory(sizing.ServingRequest(model=toy(attention=None), context=10), V6E_1)
    assert sizing.breakdown(memory) == "weights 0.0 GiB + overhead 0.5 GiB"


@pytest.mark.parametrize(
    "payload,expected",
    [
        (0, 1),
        (GiB, 2),
        (10 * GiB, 11),
        (10 * GiB + 1, 12),
        (20 * GiB, 22),
        (GiB * 10 // 11, 1),
    ],  # ceil(bytes x 1.1 / GiB), at least 1
)
def test_file_cache_is_the_payload_plus_ten_percent_in_whole_gib(payload, expected):
    assert sizing.file_cache_gib(payload) == expected
