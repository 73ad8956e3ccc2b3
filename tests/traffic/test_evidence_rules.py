"""The rules of traffic/evidence.py the optimizer applies after choosing a basis, each on hand-made inputs.

`refuted`: a modelled figure never claims what a GIQ profile of the same model, server, generation and chips (on
another machine type) measured missing; `_same_slice` says which profiles count; `flagged`: what the roofline
leaves out, said in the figure's source (or, for heads the devices do not divide, no candidate); `_at_most`: a
scaled model never serves more than the row it is scaled to; `from_model`'s FLAGGED notes (a borrowed
calibration, `_other_kind`: a fit on the other kind of model) and `from_measurement`'s batch wording. The served figures below are made up so that each
rule decides alone: no traffic model is run, so a refit of traffic/model.py leaves these answers alone.
"""

from __future__ import annotations

import pytest

from tests.traffic.giq import GIQ_V5E_2X4, giq_profile
from tests.traffic.test_optimizer import VLLM_ROW, pinned
from tpu_stacks.catalog.models import Attention, ModelArchitecture, ResolvedModel, lookup_model
from tpu_stacks.catalog.throughput_measurements import MEASUREMENTS, row_model
from tpu_stacks.catalog.tpu import all_slice_shapes, slice_shape
from tpu_stacks.traffic.evidence import (
    PerReplica,
    Served,
    _at_most,
    _other_kind,
    _same_slice,
    flagged,
    from_measurement,
    from_model,
    refuted,
)
from tpu_stacks.traffic.model import Workload, calibration, choose, operating_point
from tpu_stacks.traffic.profiles import Profile, ProfilePoint
from tpu_stacks.traffic.target import TrafficTarget

MODEL = lookup_model("meta-llama/Llama-3.1-8B")  # 32 query heads, 8 KV heads
V5E_2X4 = {s.machine_type: s for s in all_slice_shapes("v5e") if s.topology == "2x4"}
ONE_HOST = V5E_2X4["ct5lp-hightpu-8t"]  # 8 chips on one host
TWO_HOSTS = V5E_2X4["ct5lp-hightpu-4t"]  # the same 8 chips on two hosts
MODELLED = Served(PerReplica(1000.0, 5000.0, 20.0, 300.0, 64), "model", "roofline model", "ntpot-target")
NTPOT_40 = TrafficTarget(output_tokens_per_second=2000, ntpot_ms=40)
SLOW = ProfilePoint(queries_per_second=1.0, output_tokens_per_second=500.0, ntpot_ms=80.0, ttft_ms=200.0)
"""Measured at 80 ms NTPOT and 200 ms TTFT: misses an NTPOT limit of 40 ms, meets a TTFT limit of 300 ms."""
QUICK = ProfilePoint(queries_per_second=1.0, output_tokens_per_second=500.0, ntpot_ms=30.0, ttft_ms=200.0)
NO_FIGURES = PerReplica(None, None, None, None, None)


def giq(*points: ProfilePoint, **fields) -> Profile:
    """A GIQ profile of the v5e 2x4 slice on one ct5lp-hightpu-8t host unless told otherwise (SLOW without points)."""
    return giq_profile(*(points or (SLOW,)), **{**GIQ_V5E_2X4, **fields})


# --- refuted ---------------------------------------------------------------------------------------


def test_a_profile_of_the_same_slice_on_another_machine_type_measuring_a_miss_refutes_the_model():
    profile = giq(SLOW)
    answer = refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [profile])
    assert answer == Served(
        NO_FIGURES,
        "profile",
        profile.label,
        "ntpot-target",
        "the GIQ profile of v5e 2x4 (ct5lp-hightpu-8t) measured no operating point within the latency limits",
    )


def test_the_refuting_profile_names_the_limit_it_missed():
    ttft = TrafficTarget(output_tokens_per_second=2000, ttft_ms=100)  # SLOW's 200 ms to the first token
    assert refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", ttft, [giq(SLOW)]).limit == "ttft-target"


def test_a_profile_that_meets_the_limit_leaves_the_model_alone():
    assert refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [giq(QUICK)]) is MODELLED
    # one point meeting it is enough, whatever the others measured
    assert refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [giq(QUICK, SLOW)]) is MODELLED


def test_a_figure_that_already_meets_nothing_is_left_as_it_is():
    nothing = Served(NO_FIGURES, "model", "roofline model", "ntpot-target", "does not fit")
    assert refuted(nothing, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [giq(SLOW)]) is nothing


def test_the_profile_of_this_very_machine_type_is_not_a_sibling():
    """The optimizer reads a profile of the candidate's own slice as its figures (from_profile), before any model:
    refuted only looks at siblings on other machine types."""
    assert refuted(MODELLED, MODEL, ONE_HOST, "vllm", NTPOT_40, [giq(SLOW)]) is MODELLED


def test_profiles_of_other_slices_are_skipped_and_a_later_sibling_still_refutes():
    other_server = giq(SLOW, server="JetStream")
    other_chips = giq(SLOW, topology="4x4", count=16)
    assert refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [other_server, other_chips]) is MODELLED
    answer = refuted(MODELLED, MODEL, TWO_HOSTS, "vllm", NTPOT_40, [other_server, giq(SLOW)])
    assert answer.per_replica == NO_FIGURES and answer.basis == "profile"


# --- _same_slice -------------------------------------------------------------------------------------


def test_the_same_slice_is_the_same_server_generation_weights_and_chips_whatever_the_machine_type():
    assert _same_slice(giq(), MODEL, TWO_HOSTS, "vllm") is True
    assert _same_slice(giq(server="VLLM"), MODEL, TWO_HOSTS, "vllm") is True  # GIQ's server names, any case
    # the Instruct profile holds the base model's weights
    assert _same_slice(giq(model="meta-llama/Llama-3.1-8B"), MODEL, TWO_HOSTS, "vllm") is True


def test_another_server_generation_or_model_is_not_the_same_slice():
    assert _same_slice(giq(server="JetStream"), MODEL, TWO_HOSTS, "vllm") is False
    v6e = giq(accelerator="tpu-v6e-slice", instance="ct6e-standard-8t")
    assert _same_slice(v6e, MODEL, TWO_HOSTS, "vllm") is False
    assert _same_slice(giq(model="google/gemma-2-9b"), MODEL, TWO_HOSTS, "vllm") is False
    assert _same_slice(giq(model="nobody/uncatalogued-model"), MODEL, TWO_HOSTS, "vllm") is False


def test_either_the_chip_count_or_the_topology_says_the_chips_are_the_same():
    assert _same_slice(giq(topology="", count=8), MODEL, TWO_HOSTS, "vllm") is True
    assert _same_slice(giq(topology="2x4", count=None), MODEL, TWO_HOSTS, "vllm") is True
    assert _same_slice(giq(topology="4x4", count=16), MODEL, TWO_HOSTS, "vllm") is False
    assert _same_slice(giq(topology="", count=None), MODEL, TWO_HOSTS, "vllm") is False


# --- flagged -----------------------------------------------------------------------------------------


def _toy(query_heads: int | None = 32, kv_heads: int = 8, attention: bool = True) -> ResolvedModel:
    shape = Attention(layers=2, kv_heads=kv_heads, head_dim=4, query_heads=query_heads) if attention else None
    fields = dict(name="toy", display_name="toy", attention=shape, declared_params=1_000_000, source="test")
    return ResolvedModel(id="toy", architecture=ModelArchitecture(**fields))


def test_heads_the_devices_do_not_divide_make_no_candidate_whatever_the_basis():
    for basis in ("model", "measured", "profile"):
        answer = flagged(Served(MODELLED.per_replica, basis, "src", "ntpot-target"), _toy(12), ONE_HOST, 8, 1)
        assert answer.per_replica == NO_FIGURES and answer.limit is None
        assert answer.why == "gives tensor parallelism 8 (v5e devices), which does not divide toy's 12 attention heads"


def test_tensor_parallelism_above_the_kv_heads_is_said_and_at_them_is_not():
    above = flagged(MODELLED, _toy(kv_heads=4), ONE_HOST, 8, 1)
    assert above.source == "roofline model; tensor parallelism 8 above 4 KV heads: KV heads replicated, counted"
    assert above.per_replica == MODELLED.per_replica and above.limit == MODELLED.limit
    assert flagged(MODELLED, _toy(kv_heads=8), ONE_HOST, 8, 1) is MODELLED


def test_a_model_without_a_known_attention_shape_gets_no_kv_note():
    assert flagged(MODELLED, _toy(attention=False), ONE_HOST, 8, 1) is MODELLED


def test_several_hosts_are_said_and_one_is_not():
    two = flagged(MODELLED, MODEL, TWO_HOSTS, 8, 2)
    assert two.source == "roofline model; 2 hosts: collectives between hosts not modelled (optimistic)"
    assert flagged(MODELLED, MODEL, TWO_HOSTS, 8, 1) is MODELLED


def test_both_notes_are_joined_in_order():
    both = flagged(MODELLED, _toy(kv_heads=4), TWO_HOSTS, 8, 2)
    assert both.source == (
        "roofline model; tensor parallelism 8 above 4 KV heads: KV heads replicated, counted;"
        " 2 hosts: collectives between hosts not modelled (optimistic)"
    )


def test_a_measured_or_profiled_figure_carries_no_model_notes():
    """The notes say what the roofline leaves out: a measurement left nothing out."""
    for basis in ("measured", "profile"):
        served = Served(MODELLED.per_replica, basis, "a measurement", None)
        assert flagged(served, _toy(kv_heads=4), TWO_HOSTS, 8, 2) is served


# --- _at_most ----------------------------------------------------------------------------------------


def _rate(output: float | None, inputs: float | None = 6000.0) -> Served:
    return Served(PerReplica(output, inputs, 20.0, 300.0, 32), "model", "scaled", "ntpot-target")


def test_a_scaled_model_above_the_row_serves_the_rows_rate_and_its_inputs_scale_alike():
    capped = _at_most(_rate(1200.0), 1000.0)
    assert capped.per_replica.output_tokens_per_second == 1000.0
    assert capped.per_replica.input_tokens_per_second == 5000.0  # 6000 x 1000 / 1200
    assert (capped.per_replica.ntpot_ms, capped.per_replica.batch, capped.source) == (20.0, 32, "scaled")


def test_at_the_rows_rate_exactly_the_figures_stay():
    at = _at_most(_rate(1000.0), 1000.0).per_replica
    assert (at.output_tokens_per_second, at.input_tokens_per_second) == (1000.0, 6000.0)


def test_within_a_billionth_below_the_row_is_the_rows_rate_and_further_below_is_left():
    hair = _at_most(_rate(1000.0 * (1 - 5e-10)), 1000.0).per_replica
    assert hair.output_tokens_per_second == 1000.0
    at_a_billionth = _at_most(_rate(1000.0 * (1 - 1e-9)), 1000.0).per_replica  # the boundary is in
    assert at_a_billionth.output_tokens_per_second == 1000.0
    below = _rate(1000.0 * (1 - 2e-9))
    assert _at_most(below, 1000.0) is below
    smaller_batch = _rate(600.0)
    assert _at_most(smaller_batch, 1000.0) is smaller_batch


def test_no_rate_or_no_input_rate_stays_unknown():
    none = _rate(None)
    assert _at_most(none, 1000.0) is none
    assert _at_most(_rate(1200.0, inputs=None), 1000.0).per_replica.input_tokens_per_second is None


def test_the_shapes_used_here_are_the_catalogues():
    """v5e 2x4 comes on one 8-chip host and on two 4-chip hosts (the siblings refuted compares)."""
    assert (ONE_HOST.chips, TWO_HOSTS.chips, ONE_HOST.topology) == (8, 8, "2x4")
    assert slice_shape("v5e", "2x4").machine_type in V5E_2X4


# --- from_model: what the figure's source flags -------------------------------------------------------

DENSE = lookup_model("llama-3-8b")
MOE = row_model(next(row for row in MEASUREMENTS if row.generation == "tpu7x"))  # Qwen3-Coder 480B-A35B
WORKLOAD = Workload(engine="vllm", input_tokens=1000, output_tokens=200)
ANY_RATE = TrafficTarget(output_tokens_per_second=1000)
NO_ROW_ON_V5E = "no published row on v5e: efficiencies of v6e (vLLM main 2025-04-11 (PyTorch/XLA)) used"
ON_DENSE_ROWS = "efficiencies fitted only on dense rows, whose kernels and collectives are not a mixture of experts's"
ON_MOE_ROWS = (
    "efficiencies fitted only on mixture-of-experts rows, whose kernels and collectives are not a dense model's"
)
# tpu-inference runs Llama with its JAX model and Qwen3 MoE with vLLM's PyTorch one (test_model_implementation.py);
# vLLM's v6e row ran PyTorch/XLA and its tpu7x rows the PyTorch one
DENSE_ON_V6E = "the pinned build runs LlamaForCausalLM as tpu-inference's own JAX model (flax_nnx), which no fitted row on v6e ran: efficiencies fitted on rows of vLLM's PyTorch model on its PyTorch/XLA backend (before tpu-inference) used"
DENSE_ON_TPU7X = "the pinned build runs LlamaForCausalLM as tpu-inference's own JAX model (flax_nnx), which no fitted row on tpu7x ran: efficiencies fitted on rows of vLLM's PyTorch model through tpu-inference's torchax (MODEL_IMPL_TYPE=vllm) used"
MOE_ON_V6E = "the pinned build runs Qwen3MoeForCausalLM as vLLM's PyTorch model through tpu-inference's torchax (MODEL_IMPL_TYPE=vllm), which no fitted row on v6e ran: efficiencies fitted on rows of vLLM's PyTorch model on its PyTorch/XLA backend (before tpu-inference) used"


def _flags(model: ResolvedModel, generation: str, topology: str) -> str:
    """What follows the model's source line: "" or "; FLAGGED: ..."."""
    source = from_model(model, slice_shape(generation, topology), WORKLOAD, ANY_RATE, 256).source
    return source.split("docs/sizing-for-traffic.md)", 1)[1]


def test_a_model_on_its_own_kind_generation_and_implementations_rows_is_not_flagged():
    assert _flags(MOE, "tpu7x", "2x2x1") == ""  # vLLM's tpu7x fit: Qwen3-Coder rows only, vLLM's PyTorch model


def test_a_borrowed_calibration_another_implementation_and_the_other_kind_are_each_flagged_and_joined():
    assert _flags(DENSE, "v6e", "2x4") == f"; FLAGGED: {DENSE_ON_V6E}"  # v6e's one dense row ran PyTorch/XLA
    assert _flags(DENSE, "v5e", "2x4") == f"; FLAGGED: {NO_ROW_ON_V5E}; {DENSE_ON_V6E}"
    assert _flags(DENSE, "tpu7x", "2x2x1") == f"; FLAGGED: {DENSE_ON_TPU7X}; {ON_MOE_ROWS}"
    assert _flags(MOE, "v6e", "2x4") == f"; FLAGGED: {MOE_ON_V6E}; {ON_DENSE_ROWS}"
    assert _flags(MOE, "v5e", "2x4") == f"; FLAGGED: {NO_ROW_ON_V5E}; {MOE_ON_V6E}; {ON_DENSE_ROWS}"


def test_two_experts_are_a_mixture_and_one_is_dense():
    v6e_fit, _ = calibration("vllm", "v6e")  # fitted on the dense Llama 3 8B row
    two = ResolvedModel(id="toy", architecture=DENSE.architecture.model_copy(update={"experts": 2}))
    assert _other_kind(two, v6e_fit) == ON_DENSE_ROWS
    assert _other_kind(DENSE, v6e_fit) == ""


def test_the_unscaled_model_is_the_roofline_at_its_own_efficiencies():
    shape = slice_shape("v6e", "2x4")
    served = from_model(DENSE, shape, WORKLOAD, ANY_RATE, 256)
    point = choose(DENSE, shape, WORKLOAD, ntpot_ms=None, ttft_ms=None, max_batch=256).point
    assert served.per_replica.output_tokens_per_second == point.output_tokens_per_second
    assert " scaled by " not in served.source


# --- from_measurement: the row's batch and the model scaled to it ---------------------------------------

V6E_1 = slice_shape("v6e", "1x1")
ROW = pinned(VLLM_ROW)  # 945.8 output tokens/s at 1800 in / 128 out, no batch given (the KV cache chose it)
ROW_WORKLOAD = Workload(engine="vllm", input_tokens=ROW.input_tokens, output_tokens=ROW.output_tokens)
ROW_BUILD = "vLLM main 2025-04-11 (V1 engine, PyTorch/XLA TPU backend), 1800/128 tokens"


def test_the_source_says_whether_the_rows_batch_was_measured_or_modelled():
    chosen = from_measurement(ROW, DENSE, V6E_1, ROW_WORKLOAD, ANY_RATE, 512)
    assert chosen.source == f"{ROW_BUILD}, batch {chosen.per_replica.batch} (modelled): {ROW.source}"
    given = from_measurement(ROW.model_copy(update={"batch": 8}), DENSE, V6E_1, ROW_WORKLOAD, ANY_RATE, 512)
    assert given.source == f"{ROW_BUILD}, batch 8: {ROW.source}"


def test_a_row_at_exactly_the_batch_cap_is_the_measurement_and_above_it_the_model():
    row = ROW.model_copy(update={"batch": 8})
    assert from_measurement(row, DENSE, V6E_1, ROW_WORKLOAD, ANY_RATE, 8).basis == "measured"
    assert from_measurement(row, DENSE, V6E_1, ROW_WORKLOAD, ANY_RATE, 7).basis == "model"


def test_latencies_the_row_leaves_out_come_from_the_model_slowed_to_the_rows_rate():
    """Every modelled time scales with 1 / (measured / modelled rate) at the row's batch."""
    row = ROW.model_copy(update={"batch": 8})
    unscaled = operating_point(DENSE, V6E_1, ROW_WORKLOAD, 8)
    slower = unscaled.output_tokens_per_second / row.output_tokens_per_second
    served = from_measurement(row, DENSE, V6E_1, ROW_WORKLOAD, ANY_RATE, 512).per_replica
    assert served.ntpot_ms == pytest.approx(unscaled.ntpot_ms * slower)
    assert served.ttft_ms == pytest.approx(unscaled.ttft_ms * slower)
