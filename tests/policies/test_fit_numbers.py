"""tpu-model-fits-slice (`policies/tpu_policies/fit.py`) pinned to numbers worked out by hand.

`test_fit.py` runs the policy through the engine on the tutorials' workloads; these call its pure
functions on plain objects, so each rule mutation testing found unpinned has a test: the HBM of a
partially granted slice, the unknown-accelerator and zero-pod guard, the workload inferred without
a `workload` annotation, the translation of bad inputs into one-line errors, the message's numbers.
Numbers: [D-v5e], [D-v6e] (v5e 16 GB per chip, v6e 32 GB; machine types of 1, 4 and 8
chips), usable HBM 90%, a 512 MiB runtime reserve per chip, bf16 weights (2 bytes per parameter).
"""

import pytest

from tpu_policies import fit
from tpu_policies.values import UNKNOWN
from tpu_policies.workloads import PodTemplate
from tpu_stacks.errors import UserError
from tpu_stacks.objects.annotations import (
    ATTENTION,
    BATCH,
    CONTEXT,
    ENGINE,
    KV_DTYPE,
    MODEL,
    PARALLELISM,
    PARAMS,
    PREFILL_TOKENS,
    WEIGHT_DTYPE,
    WORKLOAD,
)
from tpu_stacks.sizing import ServingRequest, TrainingRequest

GB, GiB, MiB = 10**9, 1024**3, 1024**2
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def pod(accelerator, topology, chips):
    selector = {"cloud.google.com/gke-tpu-accelerator": accelerator, "cloud.google.com/gke-tpu-topology": topology}
    resources = {"limits": {"google.com/tpu": chips}}
    return {"nodeSelector": selector, "containers": [{"name": "c", "image": "i", "resources": resources}]}


def template(accelerator, topology, chips, pods):
    return PodTemplate("spec.template", pod(accelerator, topology, chips), {}, pods, None)


def deployment(spec, notes):
    return {"metadata": {"name": "d", "namespace": "ns", "annotations": notes}, "spec": {"template": {"spec": spec}}}


# -- the chips a workload gets ---------------------------------------------------------------------


def test_one_pod_on_half_a_slice_gets_half_the_hbm():
    shape = fit.granted_shape(template(V6E, "2x4", 4, 1))
    # 4 of the 8 chips, on the 4-chip VM type, 4 x 32 GB
    assert (shape.chips, shape.nodes, shape.machine_type, shape.hbm_bytes) == (4, 1, "ct6e-standard-4t", 128 * GB)
    assert shape.topology == "2x4"


def test_two_pods_of_four_chips_get_the_whole_slice_on_two_vms():
    shape = fit.granted_shape(template(V6E, "2x4", 4, 2))
    assert (shape.chips, shape.nodes, shape.machine_type, shape.hbm_bytes) == (8, 2, "ct6e-standard-4t", 256 * GB)


def test_one_pod_of_eight_chips_is_the_eight_chip_vm():
    shape = fit.granted_shape(template(V5E, "2x4", 8, 1))
    assert (shape.chips, shape.nodes, shape.machine_type, shape.hbm_bytes) == (8, 1, "ct5lp-hightpu-8t", 128 * GB)


def test_more_pods_than_the_slice_holds_get_what_they_request():
    shape = fit.granted_shape(template(V5E, "2x2", 4, 2))
    assert (shape.chips, shape.nodes, shape.hbm_bytes) == (8, 2, 128 * GB)


@pytest.mark.parametrize(
    "accelerator,topology,pods",
    [("nvidia-l4", "2x2", 1), (V5E, None, 1), (V5E, "2x2", 0), (V5E, "2x2", -1), (V5E, "2x2", None), (V5E, "3x3", 1)],
)
def test_no_shape_without_a_tpu_generation_a_topology_and_at_least_one_pod(accelerator, topology, pods):
    assert fit.granted_shape(template(accelerator, topology, 4, pods)) is None


# -- the request the annotations describe ----------------------------------------------------------


def test_no_request_without_a_model_or_with_a_value_unknown_at_preview():
    assert fit.request_from({}) is None
    assert fit.request_from({ENGINE: "vllm"}) is None
    assert fit.request_from({MODEL: "llama3-8b", CONTEXT: UNKNOWN}) is None
    assert fit.request_from({PARAMS: "7B", BATCH: UNKNOWN}) is None


def test_serving_request_defaults_and_values():
    request = fit.request_from({MODEL: "llama3-8b"})
    assert isinstance(request, ServingRequest)
    assert (request.engine, request.weight_dtype, request.kv_dtype) == ("generic", "bf16", "bf16")
    assert (request.context, request.batch, request.prefill_tokens) == (8192, 1, 8192)
    notes = {
        MODEL: "llama3-8b",
        ENGINE: "jetstream",
        WEIGHT_DTYPE: "int8",
        KV_DTYPE: "int8",
        CONTEXT: "2048",
        BATCH: " 8 ",
        PREFILL_TOKENS: "512",
    }
    request = fit.request_from(notes)
    assert (request.engine, request.weight_dtype, request.kv_dtype) == ("jetstream", "int8", "int8")
    assert (request.context, request.batch, request.prefill_tokens) == (2048, 8, 512)


def test_training_request_defaults_and_values():
    request = fit.request_from({MODEL: "llama3-8b", WORKLOAD: "train"})
    assert isinstance(request, TrainingRequest)
    assert (request.per_device_batch, request.seq_len, request.weight_dtype) == (1.0, 4096, "fp32")
    request = fit.request_from({MODEL: "llama3-8b", WORKLOAD: "train", BATCH: "0.5", CONTEXT: "1024"})
    assert (request.per_device_batch, request.seq_len) == (0.5, 1024)
    request = fit.request_from({MODEL: "llama3-8b", WORKLOAD: "train", WEIGHT_DTYPE: "bf16"})
    assert request.weight_dtype == "bf16"


@pytest.mark.parametrize(
    "notes,kind",
    [
        ({ENGINE: "maxtext"}, TrainingRequest),
        ({PARALLELISM: "fsdp=4"}, TrainingRequest),
        ({ENGINE: "vllm"}, ServingRequest),
        ({}, ServingRequest),
        ({ENGINE: "maxtext", WORKLOAD: "serve"}, ServingRequest),  # an explicit workload wins
    ],
)
def test_the_workload_is_inferred_without_a_workload_annotation(notes, kind):
    assert isinstance(fit.request_from({MODEL: "llama3-8b", **notes}), kind)


def test_a_custom_model_from_params_and_attention():
    request = fit.request_from(
        {MODEL: "acme/x", PARAMS: "10B", ATTENTION: "layers=4, kv_heads=2,head_dim=8,ignored", CONTEXT: "16"}
    )
    assert request.model.id == "acme/x" and request.model.params == 10 * GB
    attention = request.model.architecture.attention
    assert (attention.layers, attention.kv_heads, attention.head_dim) == (4, 2, 8)
    assert fit.request_from({PARAMS: "1B"}).model.id == "custom model"


@pytest.mark.parametrize(
    "notes,message",
    [
        ({MODEL: "acme/nope"}, r"^tpu-stacks.dev/model: 'acme/nope' is not in the model catalogue"),
        ({PARAMS: "1B", ATTENTION: "layers=x"}, r"^tpu-stacks.dev/attention: 'layers=x' is not field=N"),
        ({MODEL: "llama3-8b", CONTEXT: "4k"}, r"^tpu-stacks.dev/context: '4k' is not a whole number"),
        ({MODEL: "llama3-8b", WORKLOAD: "finetune"}, r"^tpu-stacks.dev/workload: 'finetune' is not a workload"),
        (
            {MODEL: "llama3-8b", CONTEXT: "0"},
            r"^tpu-stacks.dev/\* \(context\): 0 input should be greater than 0; fix the annotation$",
        ),
        (
            {MODEL: "llama3-8b", WORKLOAD: "train", BATCH: "many"},
            r"^tpu-stacks.dev/\*: \"could not convert string to float: 'many'\" is not a valid sizing input",
        ),
    ],
)
def test_bad_inputs_are_one_line_errors_naming_the_annotation(notes, message):
    with pytest.raises(UserError, match=message):
        fit.request_from(notes)


# -- the verdict -----------------------------------------------------------------------------------


def test_the_message_carries_the_numbers():
    # 40B bf16 params = 80 GB = 74.5 GiB, + 4 x 512 MiB = 2.0 GiB; 4 v5e chips x 16 GB x 0.9 = 53.6 GiB.
    # The smallest v5e slice that holds 80 GB + 8 x 512 MiB: 2x4 (115.2 GB usable), one 8-chip VM.
    (problem,) = fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x4", 4), {PARAMS: "40B"}), "fallback")
    assert problem == (
        "Deployment ns/d: custom model needs 76.5 GiB of HBM (weights 74.5 GiB + overhead 2.0 GiB) but "
        "spec.template gets 4 v5e chips on 2x4 (1 pod x 4 google.com/tpu) = 53.6 GiB usable; "
        "use v5e 2x4 (8 chips, 1 x ct5lp-hightpu-8t) or larger, or lower the context, batch or dtype"
    )
    assert fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x4", 8), {PARAMS: "40B"}), "fallback") == []


def test_a_model_no_slice_holds_says_so():
    (problem,) = fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x2", 4), {PARAMS: "10T"}), "x")
    assert "fits no v5e slice: needs" in problem and problem.endswith(
        "choose a TPU generation with more HBM, a smaller dtype, or a shorter context"
    )


def test_a_jobset_of_two_pods_names_both_and_reports_once():
    jobset = {
        "metadata": {"name": "j", "annotations": {PARAMS: "40B"}},
        "spec": {
            "replicatedJobs": [
                {"template": {"spec": {"parallelism": 2, "template": {"spec": pod(V5E, "2x4", 2)}}}},
                {"template": {"spec": {"parallelism": 2, "template": {"spec": pod(V5E, "2x4", 2)}}}},
            ]
        },
    }
    problems = fit.check_workload("kubernetes:jobset.x-k8s.io/v1alpha2:JobSet", jobset, "j")
    assert len(problems) == 2  # two templates, two places to fix
    assert "gets 4 v5e chips on 2x4 (2 pods x 2 google.com/tpu)" in problems[0]
    assert problems[0].startswith("JobSet j: ") and "spec.replicatedJobs[1]" in problems[1]


def test_a_workload_without_a_model_or_tpu_is_not_judged():
    assert fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x2", 4), {}), "d") == []
    cpu = {"containers": [{"name": "c", "image": "i"}]}
    assert fit.check_workload(DEPLOYMENT, deployment(cpu, {PARAMS: "40B"}), "d") == []
    assert fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "9x9", 4), {PARAMS: "40B"}), "d") == []


def test_a_bad_annotation_is_reported_as_cannot_size():
    (problem,) = fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x2", 4), {MODEL: "acme/nope"}), "d")
    assert problem.startswith("Deployment ns/d: cannot size the workload: tpu-stacks.dev/model: 'acme/nope'")


def test_a_sizing_error_on_judging_is_reported_as_cannot_size():
    notes = {MODEL: "llama3-8b", WORKLOAD: "train", WEIGHT_DTYPE: "int8"}  # not a training dtype
    (problem,) = fit.check_workload(DEPLOYMENT, deployment(pod(V5E, "2x2", 4), notes), "d")
    assert problem == (
        "Deployment ns/d: cannot size the workload: weight_dtype: 'int8' is not a training dtype; valid: fp32, bf16"
    )


def test_only_kubernetes_resources_are_validated():
    reported = []
    args = type("Args", (), {"resource_type": "gcp:storage/bucket:Bucket", "props": {}, "name": "b"})()
    fit._validate(args, lambda message, urn: reported.append(message))
    assert reported == []
    props = deployment(pod(V5E, "2x4", 4), {PARAMS: "40B"})
    args = type("Args", (), {"resource_type": DEPLOYMENT, "props": props, "name": "d"})()
    fit._validate(args, lambda message, urn: reported.append(message))
    assert len(reported) == 1 and "76.5 GiB" in reported[0]


def test_of_several_invalid_inputs_the_first_in_the_requests_order_is_named():
    """ServingRequest validates model, engine, dtypes, context, batch, prefill in that order: a context and
    a batch of 0 both fail, and the one-line error names the context."""
    with pytest.raises(UserError, match=r"^tpu-stacks.dev/\* \(context\): 0 input should be greater than 0"):
        fit.request_from({MODEL: "llama3-8b", CONTEXT: "0", BATCH: "0"})


def test_a_prefill_annotation_that_is_not_text_is_reported_not_judged():
    """Kubernetes annotations are strings; a number given by a program is not sized with a made-up step."""
    with pytest.raises(UserError, match=r"^tpu-stacks.dev/prefill-tokens: 512 is not text"):
        fit.request_from({MODEL: "llama3-8b", PREFILL_TOKENS: 512.0})


# -- the tensor-parallel shard (vLLM --tensor-parallel-size read from the engine's flags) ------------
# 15B bf16 params = 30 GB = 27.9 GiB (+ 512 MiB per chip judged): more than one v6e chip holds
# (32 GB x 0.9 = 26.8 GiB usable), less than the four of a 2x2 VM (107.3 GiB).


def judged(tp, params="15B"):
    request = fit.request_from({PARAMS: params})
    return fit._judge("Deployment d", request, template(V6E, "2x2", 4, 1), "", tp)


def test_a_tensor_parallel_size_below_the_chips_is_judged_on_that_many_chips():
    assert judged(None) == (None, None) and judged(4) == (None, None)  # all four chips
    message, error = judged(1)
    assert error is None
    assert "custom model needs 28.4 GiB of HBM" in message
    assert "gets 1 v6e chips on 2x2 (1 pod x 4 google.com/tpu, sharded over --tensor-parallel-size=1) = 26.8 GiB" in (
        message
    )


def test_a_tensor_parallel_size_of_zero_or_above_the_chips_shards_nothing():
    assert judged(0) == (None, None)
    message, _ = judged(8, params="60B")  # 120 GB: more than the four chips hold, whatever tp says
    assert "gets 4 v6e chips on 2x2 (1 pod x 4 google.com/tpu) = 107.3 GiB usable" in message
    assert "sharded" not in message
    message, _ = judged(None, params="60B")
    assert "(1 pod x 4 google.com/tpu) = 107.3 GiB usable" in message
