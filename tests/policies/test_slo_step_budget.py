"""tpu-slo-capacity on a hand-written vLLM server (no sizing annotations: read from its arguments): judged at the
`--max-num-batched-tokens` its arguments give, else at vLLM's own default on the slice's generation, never at the
stack's spec default. vLLM's default on v6e at vllm-tpu 0.29.0 with tpu-inference 0.29.0 is the API server's generic
2048 (tests/traffic/test_vllm_batched_tokens.py says why, from the upstream lines)."""

from __future__ import annotations

import pulumi_kubernetes as k8s

from tests.policies import objects as o
from tests.policies.harness import capture, of, run
from tests.policies.test_fit_raw import VLLM_IMAGE
from tests.traffic.test_vllm_batched_tokens import LLAMA_8B, THE_STACK_S, VLLM_API_SERVER_DEFAULT
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.catalog.tpu import generation, slice_shape
from tpu_stacks.objects import annotations as keys
from tpu_stacks.traffic import TrafficTarget, evaluate_slice

MODELLED = "tpu-slo-capacity-modelled"


def _server(args_extra: list[str], maximum: int) -> list[object]:
    args = ["--host=0.0.0.0", "--port=8000", "--max-model-len=4096", f"--model={LLAMA_8B}", "--max-num-seqs=128"]
    spec = o.pod(
        "tpu-v6e-slice",
        "1x1",
        1,
        image=VLLM_IMAGE,
        command=["python3", "-m", "vllm.entrypoints.openai.api_server"],
        args=[*args, *args_extra],
    )
    notes = {keys.SLO_OUTPUT_TOKENS_PER_SECOND: "5000"}
    hpa = k8s.autoscaling.v2.HorizontalPodAutoscaler(
        "vllm-hpa",
        metadata={"name": "vllm-hpa", "namespace": "serving"},
        spec={
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "vllm-tpu"},
            "minReplicas": 1,
            "maxReplicas": maximum,
        },
    )
    return [o.deployment("vllm-tpu", spec, notes), hpa]


def _replicas(budget: int) -> int:
    found = evaluate_slice(
        lookup_model(LLAMA_8B),
        slice_shape(generation("v6e"), "1x1"),
        TrafficTarget(output_tokens_per_second=5000),
        max_model_len=4096,
        max_batch=128,
        batched_tokens=budget,
    )
    return found.replicas


def _advice(args_extra: list[str], maximum: int) -> list[str]:
    diagnostics = run(capture(lambda: _server(args_extra, maximum)))
    return [d.message for d in of(diagnostics, MODELLED)]


def test_the_pack_judges_a_server_without_the_flag_at_vllm_s_default():
    own, stack = _replicas(VLLM_API_SERVER_DEFAULT), _replicas(THE_STACK_S)
    assert own < stack  # vLLM's larger step carries more per replica on this slice
    assert _advice([], own) == []
    (message,) = _advice([], own - 1)
    assert f"raise it to {own}," in message


def test_the_pack_judges_a_server_at_the_budget_its_arguments_give():
    given = _replicas(256)
    assert given > _replicas(VLLM_API_SERVER_DEFAULT)
    assert _advice(["--max-num-batched-tokens", "256"], given) == []
    (message,) = _advice(["--max-num-batched-tokens=256"], given - 1)
    assert f"raise it to {given}," in message


def test_the_budget_and_the_batch_cap_are_read_in_vllm_s_underscore_spelling_too():
    """vLLM's parser takes `--max_num_batched_tokens` for `--max-num-batched-tokens` (ledger:
    vllm.args.underscores-as-dashes); the pack judges the server at the budget it runs with."""
    given = _replicas(256)
    assert _advice(["--max_num_batched_tokens", "256"], given) == []
    (message,) = _advice(["--max_num_batched_tokens=256"], given - 1)
    assert f"raise it to {given}," in message


def test_the_underscore_spelling_is_read_only_for_an_engine_whose_parser_takes_it():
    """vLLM's parser takes `--max_num_batched_tokens`; another engine's is its own (SGLang-JAX's argparse has no
    underscore spelling): the pack reads a pod's flags with the pod's engine's rule."""
    from types import SimpleNamespace

    from tests.policies.test_engine_args import template
    from tpu_policies.slo import step_budget

    deployment = SimpleNamespace(type="kubernetes:apps/v1:Deployment", props={})
    sglang = ["python3", "-m", "sgl_jax.launch_server"]  # the command SGLang-JAX's record recognises
    assert step_budget(template(VLLM_IMAGE, ["--max_num_batched_tokens=256"]), deployment) == 256
    assert step_budget(template("my/server:1", ["--max_num_batched_tokens=256"], sglang), deployment) is None
    assert step_budget(template("my/server:1", ["--max-num-batched-tokens=256"], sglang), deployment) == 256


def test_async_scheduling_is_read_from_the_servers_switches_as_vllm_reads_them():
    """`--no-async-scheduling` (BooleanOptionalAction, ledger: vllm.args.boolean-switches) spares a request the one
    queued step; the pack tells the traffic model what the server was given, as the plan does, and a Serve config's
    `async_scheduling: false` is the same switch. Not vLLM: no such setting."""
    from types import SimpleNamespace

    from tests.policies.test_engine_args import template
    from tpu_policies.slo import async_scheduling

    deployment = SimpleNamespace(type="kubernetes:apps/v1:Deployment", props={})
    read = {
        tuple(args): async_scheduling(template(VLLM_IMAGE, args), deployment)
        for args in (
            [],
            ["--no-async-scheduling"],
            ["--no-async-scheduling", "--async-scheduling"],
            ["--async_scheduling"],
        )
    }
    assert list(read.values()) == [None, False, True, True]
    sglang = ["python3", "-m", "sgl_jax.launch_server"]
    assert async_scheduling(template("my/server:1", ["--no-async-scheduling"], sglang), deployment) is None
