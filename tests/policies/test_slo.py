"""tpu-slo-capacity (mandatory: measured or profiled figures) and tpu-slo-capacity-modelled (advisory: the
roofline's estimate), on raw programs declared with pulumi-kubernetes: a Deployment with an HPA, a fixed
Deployment, a JetStream server and a RayService, each violating and passing.

The expected replica counts are the traffic model's own answer for the same slice, asked here; the
workloads' annotated predictions are never what the pack reads (one test lies in them on purpose)."""

from pathlib import Path

import pulumi_kubernetes as k8s
import pytest
import yaml

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tests.policies.test_fit_raw import JETSTREAM_IMAGE, VLLM_IMAGE, vllm_args
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.throughput_measurements import SHAREGPT_INPUT_TOKENS, SHAREGPT_OUTPUT_TOKENS
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.objects import annotations as keys
from tpu_stacks.traffic import TrafficTarget, evaluate_slice

MANDATORY, ADVISORY = "tpu-slo-capacity", "tpu-slo-capacity-modelled"
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"
LLAMA_8B, LLAMA_70B = "meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B"


def target_notes(rate, ntpot=None, ttft=None, inputs=None, outputs=None):
    """The target half of the annotation contract (what a stack's `slo:` writes), values as strings."""
    notes = {keys.SLO_OUTPUT_TOKENS_PER_SECOND: str(rate)}
    for key, value in (
        (keys.SLO_NTPOT_MS, ntpot),
        (keys.SLO_TTFT_MS, ttft),
        (keys.SLO_INPUT_TOKENS, inputs),
        (keys.SLO_OUTPUT_TOKENS, outputs),
    ):
        if value is not None:
            notes[key] = str(value)
    return notes


def need(model, topology, gen="v6e", engine="vllm", context=4096, max_batch=128, batched_tokens=512, **target):
    """Replicas and basis the traffic model gives for the slice (what the pack must recompute); `batched_tokens`:
    the server's `--max-num-batched-tokens` (vllm_args gives 512; None: the engine's own default)."""
    answer = evaluate_slice(
        lookup_model(model),
        slice_shape(generation(gen), topology),
        TrafficTarget(**target),
        engine=engine,
        max_model_len=context,
        max_batch=max_batch,
        batched_tokens=batched_tokens,
    )
    return answer


def hpa(maximum, namespace="serving", target="vllm-tpu"):
    return k8s.autoscaling.v2.HorizontalPodAutoscaler(
        "vllm-hpa",
        metadata={"name": "vllm-hpa", "namespace": namespace},
        spec={
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 1,
            "maxReplicas": maximum,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "prometheus.googleapis.com|vllm:num_requests_waiting|gauge"},
                        "target": {"type": "AverageValue", "averageValue": "10"},
                    },
                }
            ],
        },
    )


def vllm_deployment(model, topology, chips, slo, replicas=1, contract=True, accelerator=V6E):
    """The GKE tutorial's vLLM Deployment; `contract`: with the sizing annotations a stack writes."""
    notes = {**(o.serving_notes(model, chips) if contract else {}), **slo}
    command = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    spec = o.pod(accelerator, topology, chips, image=VLLM_IMAGE, command=command, args=vllm_args(model, chips))
    return o.deployment("vllm-tpu", spec, notes, replicas=replicas)


def judged(build):
    diagnostics = run(capture(build))
    assert not [d for d in diagnostics if "can't run policy" in d.message]
    return of(diagnostics, MANDATORY), of(diagnostics, ADVISORY)


# -- the pinned engines: no shipped row measures their build, so the roofline's figure is advisory ----------------


def test_an_hpa_maximum_that_cannot_carry_the_target_is_reported_on_the_model_not_an_older_build():
    """The only vLLM row ran vLLM's PyTorch/XLA backend; the pinned vLLM runs on tpu-inference: no evidence for it."""
    answer = need(LLAMA_8B, "1x1", output_tokens_per_second=5000)
    assert answer.basis == "model" and answer.replicas > 2
    slo = target_notes(5000)
    mandatory, (problem,) = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(2)])
    assert problem.level == "advisory" and mandatory == []
    assert problem.message.startswith(
        "Deployment serving/vllm-tpu: its most replicas (HorizontalPodAutoscaler serving/vllm-hpa maxReplicas = 2)"
    )
    assert f"below the annotated target of 5000; raise it to {answer.replicas}" in problem.message
    # the roofline fitted on that row, never the row itself as the measured figure
    assert "model: roofline model" in problem.message and "pull/16458" not in problem.message
    assert "`tpu-stacks size meta-llama/Llama-3.1-8B --output-tokens-per-second 5000" in problem.message
    # the server's own flags (the tutorial's --max-model-len=4096, --max-num-seqs=128, --max-num-batched-tokens=512),
    # which change size's answer: without them size ranks for its own defaults
    assert "--engine vllm --context 4096 --batch 128 --max-num-batched-tokens 512`" in problem.message


def test_the_same_workload_with_enough_maximum_passes():
    answer = need(LLAMA_8B, "1x1", output_tokens_per_second=5000)
    slo = target_notes(5000)
    assert judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(answer.replicas)]) == ([], [])


def test_the_annotated_prediction_is_not_trusted():
    """A workload that claims one replica carries everything is judged on the pack's own figure."""
    lie = {
        **target_notes(5000),
        keys.SLO_REPLICAS: "1",
        keys.SLO_REPLICA_OUTPUT_TOKENS_PER_SECOND: "99999",
        keys.SLO_BASIS: "measured",
    }
    rate = need(LLAMA_8B, "1x1", output_tokens_per_second=5000).per_replica.output_tokens_per_second
    _, (problem,) = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, lie), hpa(1)])
    assert f"maxReplicas = 1) carry {rate:g} output tokens/s" in problem.message and rate < 5000


def test_without_an_hpa_the_deployment_replicas_are_the_maximum():
    slo = target_notes(5000)
    rate = need(LLAMA_8B, "1x1", output_tokens_per_second=5000).per_replica.output_tokens_per_second
    _, (problem,) = judged(lambda: vllm_deployment(LLAMA_8B, "1x1", 1, slo, replicas=2))
    assert f"its most replicas (spec.replicas = 2) carry {2 * rate:g} output tokens/s" in problem.message


def test_an_hpa_of_another_namespace_does_not_count():
    slo = target_notes(5000)
    answer = need(LLAMA_8B, "1x1", output_tokens_per_second=5000)
    _, (problem,) = judged(
        lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(answer.replicas, namespace="elsewhere")]
    )
    assert "(spec.replicas = 1)" in problem.message


def test_a_raw_program_without_the_sizing_contract_is_read_from_its_arguments():
    """Only the target is annotated: model, context and batch cap come from vLLM's own flags."""
    slo = target_notes(5000)
    _, (problem,) = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo, contract=False), hpa(2)])
    assert problem.level == "advisory" and "maxReplicas = 2" in problem.message


def test_a_jetstream_server_on_the_published_gemma_row_shape():
    """The Gemma row ran a JetStream-PyTorch build of 2024-05-10, not the pinned image: judged on the model."""
    lengths = {"input_tokens": SHAREGPT_INPUT_TOKENS, "output_tokens": SHAREGPT_OUTPUT_TOKENS}
    answer = need("google/gemma-7b-it", "2x4", "v5e", "jetstream", 2048, 96, output_tokens_per_second=9000, **lengths)
    assert answer.basis == "model" and answer.replicas > 1
    slo = target_notes(9000, inputs=SHAREGPT_INPUT_TOKENS, outputs=SHAREGPT_OUTPUT_TOKENS)
    args = [
        "--size=7b",
        "--model_name=gemma",
        "--batch_size=96",
        "--max_cache_length=2048",
        "--tokenizer_path=/models/pytorch/gemma-7b-it/final/bf16/tokenizer.model",
        "--checkpoint_path=/models/pytorch/gemma-7b-it/final/bf16/model.safetensors",
    ]

    def server(replicas):
        spec = o.pod(V5E, "2x4", 8, image=JETSTREAM_IMAGE, args=args)
        return lambda: o.deployment("jetstream", spec, slo, replicas=replicas)

    mandatory, (problem,) = judged(server(1))
    assert mandatory == [] and problem.level == "advisory" and f"raise it to {answer.replicas}" in problem.message
    assert judged(server(answer.replicas)) == ([], [])


# -- modelled figures: advisory -------------------------------------------------------------------------------


def test_a_modelled_figure_is_advisory():
    answer = need(LLAMA_8B, "1x1", output_tokens_per_second=5000, ntpot_ms=30)
    assert answer.basis == "model"
    slo = target_notes(5000, ntpot=30)
    mandatory, (advice,) = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(answer.replicas - 1)])
    assert mandatory == [] and advice.level == "advisory"
    assert f"raise it to {answer.replicas}" in advice.message and "model: roofline model" in advice.message
    assert judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(answer.replicas)]) == ([], [])


def test_a_slice_that_cannot_keep_the_latency_at_any_load():
    slo = target_notes(5000, ntpot=1)
    mandatory, (advice,) = judged(lambda: [vllm_deployment(LLAMA_70B, "2x4", 8, slo), hpa(64)])
    assert mandatory == []
    assert advice.message.startswith(
        "Deployment serving/vllm-tpu: one replica of v6e 2x4 cannot meet the target's latency limits at any load "
        "(misses the latency limit even at batch 1: NTPOT"
    )
    assert "--ntpot-ms 1 " in advice.message


def test_a_rayservice_is_judged_on_its_serve_max_replicas():
    # the Serve config gives no max_num_batched_tokens: vLLM's own default (batched_tokens=None)
    answer = need(LLAMA_70B, "2x4", output_tokens_per_second=4000, ntpot_ms=60, max_batch=256, batched_tokens=None)
    assert answer.replicas > 1
    notes = {**o.serving_notes(LLAMA_70B, 8), **target_notes(4000, ntpot=60)}

    def service(maximum, max_num_seqs=None):
        engine = {"engine_kwargs": {"max_num_seqs": max_num_seqs}} if max_num_seqs else {}
        config = {
            "applications": [
                {
                    "name": "llm",
                    "route_prefix": "/",
                    "import_path": "ray.serve.llm:build_openai_app",
                    "args": {
                        "llm_configs": [
                            {
                                "model_loading_config": {"model_id": LLAMA_70B},
                                **engine,
                                "deployment_config": {
                                    "autoscaling_config": {"min_replicas": 1, "max_replicas": maximum}
                                },
                            }
                        ]
                    },
                }
            ]
        }
        worker = o.pod(V6E, "2x4", 8, image="rayproject/ray:2.49.1-py312")
        head = {"containers": [{"name": "ray-head", "image": "rayproject/ray:2.49.1-py312"}]}
        return lambda: o.CustomResource(
            "llm",
            api_version="ray.io/v1",
            kind="RayService",
            metadata={"name": "llm", "annotations": notes},
            spec={
                "serveConfigV2": yaml.safe_dump(config),
                "rayClusterConfig": {
                    "headGroupSpec": {"rayStartParams": {}, "template": {"spec": head}},
                    "workerGroupSpecs": [
                        {"groupName": "tpu", "replicas": 1, "numOfHosts": 1, "template": {"spec": worker}}
                    ],
                },
            },
        )

    _, (advice,) = judged(service(1))
    assert "(serveConfigV2 max_replicas = 1)" in advice.message
    assert judged(service(answer.replicas)) == ([], [])
    # the engine's batch is the Serve config's max_num_seqs (no container args): a smaller one needs more slices
    small = need(LLAMA_70B, "2x4", output_tokens_per_second=4000, ntpot_ms=60, max_batch=16, batched_tokens=None)
    assert small.replicas > answer.replicas
    _, (advice,) = judged(service(answer.replicas, max_num_seqs=16))
    assert f"(serveConfigV2 max_replicas = {answer.replicas})" in advice.message
    assert judged(service(small.replicas, max_num_seqs=16)) == ([], [])


@pytest.mark.parametrize("value", ["fast", "1e3"])
def test_a_target_that_is_not_a_number_is_named(value):
    slo = {keys.SLO_OUTPUT_TOKENS_PER_SECOND: value}
    (problem,), _ = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(2)])
    assert f"cannot judge its traffic target: {keys.SLO_OUTPUT_TOKENS_PER_SECOND}: '{value}' is not a number" in (
        problem.message
    )


@pytest.mark.parametrize(
    "key", [keys.SLO_OUTPUT_TOKENS_PER_SECOND, keys.SLO_NTPOT_MS, keys.SLO_TTFT_MS, keys.SLO_INPUT_TOKENS]
)
@pytest.mark.parametrize("value", ["0", " 00 "])
def test_a_zero_target_is_named_not_a_crash(key, value):
    """A zero passes the number pattern; it is refused in one line instead of crashing the pack on the target."""
    slo = {**target_notes(5000), key: value}
    (problem,), _ = judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(2)])
    assert f"cannot judge its traffic target: {key}: '{value}' is not above zero" in problem.message


def test_workloads_without_a_target_are_not_judged():
    assert judged(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, {}), hpa(1)]) == ([], [])


# -- GIQ profiles (the pack's `profiles` setting) --------------------------------------------------------------

FIXTURE = Path(__file__).parents[1] / "slo" / "giq_profiles.json"


def test_a_profile_in_the_pack_config_makes_the_finding_mandatory():
    """The same workload: advisory on the roofline's figure, mandatory on the GIQ profile's (700 tokens/s a replica
    within 30 ms NTPOT, so 8 replicas for 5000; the HPA allows 5)."""
    slo = target_notes(5000, ntpot=30)
    resources = capture(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(5)])
    plain = run(resources)
    assert of(plain, MANDATORY) == [] and len(of(plain, ADVISORY)) == 1
    config = {policy: {"profiles": [str(FIXTURE)]} for policy in (MANDATORY, ADVISORY)}
    profiled = run(resources, config)
    (problem,) = of(profiled, MANDATORY)
    assert of(profiled, ADVISORY) == []
    assert "raise it to 8" in problem.message and "profile: GIQ profile vllm" in problem.message
    assert of(run(capture(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(8)]), config), MANDATORY) == []


def test_an_unreadable_profiles_setting_is_reported():
    slo = target_notes(5000)
    resources = capture(lambda: [vllm_deployment(LLAMA_8B, "1x1", 1, slo), hpa(64)])
    (problem,) = of(run(resources, {MANDATORY: {"profiles": ["/nonexistent/giq.json"]}}), MANDATORY)
    assert problem.message.startswith("setting profiles: --profiles: '/nonexistent/giq.json' cannot be read")
