"""tpu-model-fits-slice: the annotated model against the chips the workload gets."""

import pytest

from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, raw, run
from tpu_policies.fit import request_from
from tpu_policies.values import UNKNOWN, as_str
from tpu_stacks.catalog.models import SAXML_175B_TEST
from tpu_stacks.objects.annotations import ATTENTION, BATCH, CONTEXT, MODEL, PARAMS, PREFILL_TOKENS

POLICY = "tpu-model-fits-slice"
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"
SAX_NOTES = o.serving_notes(SAXML_175B_TEST, 8, engine="saxml", context=256)


def fit(build):
    return of(run(capture(build)), POLICY)


def test_saxml_175b_on_v5e_2x4_does_not_fit_and_names_4x8():
    (problem,) = fit(lambda: o.jobset("sax", o.pod(V5E, "2x4", 4), 2, notes=SAX_NOTES))
    assert problem.level == "mandatory"
    assert problem.urn.endswith("JobSet::sax")
    message = problem.message
    assert f"{SAXML_175B_TEST} needs 329.9 GiB" in message
    assert "weights 324.7 GiB + kv_cache" in message  # the breakdown
    assert "gets 8 v5e chips on 2x4 (2 pods x 4 google.com/tpu) = 107.3 GiB usable" in message
    assert "use v5e 4x8 (32 chips, 8 x ct5lp-hightpu-4t)" in message  # the smallest slice that fits


def test_saxml_175b_on_v5e_4x8_fits():
    assert fit(lambda: o.jobset("sax", o.pod(V5E, "4x8", 4), 8, notes=SAX_NOTES)) == []


def test_llama_70b_on_v6e_2x2_does_not_fit_but_2x4_does():
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 4)
    (problem,) = fit(lambda: o.deployment("vllm", o.pod(V6E, "2x2", 4), notes))
    assert "meta-llama/Llama-3.1-70B needs 135.2 GiB" in problem.message
    assert "use v6e 2x4 (8 chips, 1 x ct6e-standard-8t)" in problem.message
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 8)
    assert fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), notes)) == []


def test_chips_are_what_the_pods_take_not_the_topology():
    """Only 4 of the 2x4 slice's 8 chips are requested by the single pod: 4 chips must hold the model."""
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 8)
    (problem,) = fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 4), notes))
    assert "gets 4 v6e chips on 2x4" in problem.message


def test_custom_model_from_params_and_attention_annotations():
    notes = {MODEL: "my-org/big-model", PARAMS: "60000000000", ATTENTION: "layers=60,kv_heads=8,head_dim=128"}
    (problem,) = fit(lambda: o.deployment("custom", o.pod(V5E, "2x2", 4), notes))
    assert "my-org/big-model needs" in problem.message and "kv_cache" in problem.message
    small = {MODEL: "my-org/small-model", PARAMS: "1B"}
    assert fit(lambda: o.deployment("custom", o.pod(V5E, "2x2", 4), small)) == []


def test_training_needs_weights_gradients_and_optimizer_state():
    notes = o.training_notes("llama3-8b", {"fsdp": 4, "tensor": 4})
    assert fit(lambda: o.raycluster("ray", o.pod(V6E, "4x4", 4), 4, notes)) == []
    (problem,) = fit(lambda: o.raycluster("ray", o.pod(V5E, "2x2", 4), 1, notes))
    assert "gradients" in problem.message and "optimizer" in problem.message
    assert "spec.workerGroupSpecs[0].template" in problem.message


def test_workload_without_annotations_is_skipped():
    assert fit(lambda: o.deployment("plain", o.pod(V5E, "1x1", 1))) == []


def test_unknown_model_without_params_is_reported_with_the_fix():
    (problem,) = fit(lambda: o.deployment("x", o.pod(V5E, "2x2", 4), {MODEL: "acme/unheard-of-7b"}))
    assert "is not in the model catalogue" in problem.message and "params" in problem.message


def test_values_unknown_at_preview_skip_the_check_without_an_advisory():
    """A known model whose context is computed (known only after apply): the check is skipped, not judged
    with the default context. Llama 3.1 70B on 4 v6e chips does not fit (the control below), so a pack
    that sized it anyway would report it; the model is known, so the "no model" path is not what skips."""
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 4)

    def deployment(annotations):
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d", "annotations": annotations},
            "spec": {"template": {"spec": o.pod(V6E, "2x2", 4)}},
        }

    unknown = {**notes, CONTEXT: UNKNOWN_STRING}
    diagnostics = run([raw("kubernetes:apps/v1:Deployment", "d", deployment(unknown))])
    assert of(diagnostics, POLICY) == [] and of(diagnostics, "tpu-model-sizable") == []
    assert not [d for d in diagnostics if "can't run policy" in d.message]
    (control,) = of(run([raw("kubernetes:apps/v1:Deployment", "d", deployment(notes))]), POLICY)
    assert "meta-llama/Llama-3.1-70B needs 135.2 GiB" in control.message
    # the path: the computed sizing input, with the model known
    plain_notes = {**notes, CONTEXT: UNKNOWN}
    assert as_str(plain_notes[MODEL]) == "meta-llama/Llama-3.1-70B" and request_from(plain_notes) is None
    assert request_from(notes) is not None


def test_the_prefill_step_the_component_sized_is_what_the_pack_judges():
    """vLLM's --max-num-batched-tokens sizes the prefill workspace: the annotation carries it, so the pack
    judges the workload the component sized, not the memory model's default (8192 tokens)."""
    notes = o.serving_notes("meta-llama/Llama-3.1-70B", 8, context=51200, batch=4)
    assert notes[PREFILL_TOKENS] == "8192"  # the request's default, written out
    assert fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), notes)) == []
    small = {**notes, PREFILL_TOKENS: "512"}
    assert fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), small)) == []
    large = {**notes, PREFILL_TOKENS: "131072"}
    (problem,) = fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), large))
    assert "meta-llama/Llama-3.1-70B needs 215.9 GiB" in problem.message
    without = {key: value for key, value in notes.items() if key != PREFILL_TOKENS}
    assert fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), without)) == []  # the default applies


def test_a_prefill_annotation_that_is_not_a_count_is_reported():
    notes = {**o.serving_notes("meta-llama/Llama-3.1-70B", 8), PREFILL_TOKENS: "lots"}
    (problem,) = fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), notes))
    assert f"{PREFILL_TOKENS}: 'lots' is not a whole number" in problem.message


@pytest.mark.parametrize("key", [PREFILL_TOKENS, CONTEXT, BATCH])
def test_a_numeric_sizing_annotation_is_reported_not_replaced_by_the_default(key):
    """A raw program may write `4096` unquoted; the old check read only text and judged the default
    (8192 tokens, batch 1) in its place. Kubernetes annotations are strings: it is reported with its value."""
    notes = {**o.serving_notes("meta-llama/Llama-3.1-70B", 8), key: 4096}
    (problem,) = fit(lambda: o.deployment("vllm", o.pod(V6E, "2x4", 8), notes))
    assert f'{key}: 4096 is not text (Kubernetes annotations are strings); quote it: "4096"' in problem.message
