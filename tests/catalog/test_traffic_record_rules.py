"""The engine traffic record's own rules (catalog/engines/traffic_record.py), each on a hand-made record: which
calibration a model gets by implementation and what the flag says, the step budget a server is told or not, the
steps vLLM's async scheduling keeps in flight, the KV tokens a sequence holds, and the slices a record deploys on.

The records below are made up so that each rule decides alone (no traffic model is run, so a refit leaves these
answers alone); the expected strings and numbers are the rules' as their docstrings and docs/sizing-for-traffic.md
state them: a paged cache holds a sequence's own tokens, a per-slot one its whole context (jetstream-pytorch's
cache, `ragged_mha` off); vLLM's batch queue holds two steps under async scheduling and one without (ledger:
vllm.engine.async-batches), its default on at the pinned build (vllm.async-scheduling.*)."""

from __future__ import annotations

from tpu_stacks.catalog.engines.record import Served
from tpu_stacks.catalog.engines.traffic_record import Calibration, EngineTraffic
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import all_slice_shapes, generation, slice_shape

LLAMA = lookup_model("meta-llama/Llama-3.1-8B").architecture  # LlamaForCausalLM
GEMMA = lookup_model("google/gemma-7b-it").architecture  # GemmaForCausalLM
UNNAMED = LLAMA.model_copy(update={"architecture": None})  # a custom shape: no model class

TORCH_V6E = Calibration("v6e", "build T", 0.5, 0.4, 0.3, ("t1",), implementation="torch")
JAX_V6E = Calibration("v6e", "build J", 0.6, 0.5, 0.4, ("j1",), implementation="jax")
NAMES = {"jax": "the JAX model (jax)", "torch": "the PyTorch model (torch)"}


def runs(model) -> str | None:
    """A made-up registry: Llama has a JAX class, Gemma not; a model without a class is unknown."""
    return None if model.architecture is None else "jax" if model.architecture == "LlamaForCausalLM" else "torch"


def record(*calibrations: Calibration, names=NAMES, **fields) -> EngineTraffic:
    return EngineTraffic(
        sizing_engine="vllm",
        kv_cache="paged",
        builds=(VLLM,),
        calibrations=calibrations,
        implementation=runs,
        implementation_names=names,
        **fields,
    )


# --- calibration by implementation ---------------------------------------------------------------------


def test_each_model_gets_the_calibration_of_the_implementation_it_runs_unflagged():
    both = record(TORCH_V6E, JAX_V6E)
    assert both.calibration("v6e", LLAMA) == (JAX_V6E, "")
    assert both.calibration("v6e", GEMMA) == (TORCH_V6E, "")
    assert both.implementation_of(LLAMA) == "jax" and both.implementation_of(GEMMA) == "torch"


def test_a_model_whose_implementation_no_row_ran_gets_the_nearest_flagged_in_words():
    only_torch = record(TORCH_V6E)
    assert only_torch.calibration("v6e", LLAMA) == (
        TORCH_V6E,
        "the pinned build runs LlamaForCausalLM as the JAX model (jax), which no fitted row on v6e ran: "
        "efficiencies fitted on rows of the PyTorch model (torch) used",
    )
    assert only_torch.calibration("v6e", GEMMA) == (TORCH_V6E, "")


def test_of_several_other_implementations_the_first_listed_stands_in():
    other = Calibration("v6e", "build O", 0.7, 0.6, 0.5, ("o1",), implementation="other")
    assert record(TORCH_V6E, other).calibration("v6e", LLAMA)[0] == TORCH_V6E
    assert record(other, TORCH_V6E).calibration("v6e", LLAMA)[0] == other


def test_without_words_for_them_the_flag_names_the_implementations_as_they_are_called():
    assert record(TORCH_V6E, names=None).calibration("v6e", LLAMA)[1] == (
        "the pinned build runs LlamaForCausalLM as jax, which no fitted row on v6e ran: efficiencies fitted on rows "
        "of torch used"
    )


def test_a_model_without_a_class_is_flagged_as_unknown():
    assert record(JAX_V6E).calibration("v6e", UNNAMED) == (
        JAX_V6E,
        "which implementation the pinned build runs llama-3.1-8b with is unknown (no model class): efficiencies "
        "fitted on rows of the JAX model (jax) used",
    )


def test_no_model_or_no_implementation_rule_means_no_implementation_flag():
    assert record(TORCH_V6E).calibration("v6e") == (TORCH_V6E, "")
    one = EngineTraffic(sizing_engine="vllm", kv_cache="paged", builds=(VLLM,), calibrations=(TORCH_V6E,))
    assert one.implementation_of(LLAMA) is None
    assert one.calibration("v6e", LLAMA) == (TORCH_V6E, "")


def test_a_borrowed_generation_says_so_and_takes_the_lenders_calibration_of_the_same_implementation():
    lent = record(TORCH_V6E, JAX_V6E, borrowed=(("v5e", "v6e"),))
    assert lent.calibration("v5e", LLAMA) == (JAX_V6E, "no published row on v5e: efficiencies of v6e (build J) used")
    assert record(TORCH_V6E, borrowed=(("v5e", "v6e"),)).calibration("v5e", LLAMA)[1] == (
        "no published row on v5e: efficiencies of v6e (build T) used; the pinned build runs LlamaForCausalLM as the "
        "JAX model (jax), which no fitted row on v6e ran: efficiencies fitted on rows of the PyTorch model (torch) "
        "used"
    )


def test_an_engine_without_any_calibration_gives_its_reason():
    none = record(uncalibrated="no published row measures this build")
    assert none.calibration("v6e", LLAMA) == (None, "no published row measures this build")


# --- step budget, steps in flight, KV tokens ------------------------------------------------------------


def test_the_step_budget_is_the_servers_else_the_engines_default_on_the_generation_else_none():
    defaults = record(TORCH_V6E, default_batched_tokens={"v6e": 2048, "v5e": 1024})
    assert defaults.batched_tokens("v6e", 512) == 512
    assert defaults.batched_tokens("v5e", None) == 1024
    assert record(TORCH_V6E).batched_tokens("v6e", None) is None  # no chunking: the prompt prefills apart
    assert record(TORCH_V6E).batched_tokens("v6e", 256) == 256


def test_async_scheduling_keeps_the_batch_queue_in_flight_and_its_default_decides_when_unsaid():
    vllm_like = record(TORCH_V6E, async_batches=2, async_by_default=True)
    assert vllm_like.steps_in_flight(None) == 2  # the pinned default: on
    assert vllm_like.steps_in_flight(True) == 2
    assert vllm_like.steps_in_flight(False) == 1  # --no-async-scheduling: one step at a time
    off_by_default = record(TORCH_V6E, async_batches=2)
    assert off_by_default.steps_in_flight(None) == 1
    assert off_by_default.steps_in_flight(True) == 2
    assert record(TORCH_V6E).steps_in_flight(True) == 1  # no batch queue of its own


def test_a_paged_cache_holds_a_sequences_tokens_and_a_slot_its_whole_context():
    paged = record(TORCH_V6E)
    per_slot = EngineTraffic(sizing_engine="jetstream", kv_cache="per-slot", builds=(VLLM,), calibrations=())
    assert paged.kv_tokens(4096, 1800, 128) == 1928 and not paged.fixed_batch
    assert per_slot.kv_tokens(4096, 1800, 128) == 4096 and per_slot.fixed_batch
    assert paged.versions == (VLLM.version,)


# --- deployable slices ----------------------------------------------------------------------------------


def test_a_multi_host_slice_is_deployed_only_through_a_multi_host_build_that_serves_its_generation():
    two_hosts = next(s for s in all_slice_shapes("v6e") if s.multi_host)
    serve_v6e = VLLM.model_copy(update={"serves": (Served(generation="v6e", source="test"),)})
    serve_v5e = VLLM.model_copy(update={"serves": (Served(generation="v5e", source="test"),)})
    assert not record(TORCH_V6E).deploys(two_hosts)  # no multi-host build: one host only
    assert record(TORCH_V6E, multi_host=serve_v6e).deploys(two_hosts)
    assert not record(TORCH_V6E, multi_host=serve_v5e).deploys(two_hosts)
    assert record(TORCH_V6E).deploys(slice_shape(generation("v6e"), "2x2"))  # single host: the newest build's
