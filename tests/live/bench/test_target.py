"""What bench measures, read from planned stacks: the server's Service, its pods, its model and its slice; and the
stacks with nothing to bench refused in one line."""

from __future__ import annotations

import pytest

from tests.live.support import ROOT, planned
from tpu_stacks.errors import UserError
from tpu_stacks_live.bench.target import bench_target
from tpu_stacks_live.verify.plan import load_plan


def test_the_dev_stack_single_host_vllm():
    target = bench_target(planned("dev"))
    assert target.base_url == "http://vllm-service.vllm.svc.cluster.local:8000"
    assert (target.server_labels, target.server_port) == ({"app": "vllm-tpu"}, 8000)
    assert target.model == target.served_model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert (target.accelerator, target.topology, target.chips) == ("tpu-v6e-slice", "1x1", 1)
    assert target.machine_type == "ct6e-standard-1t"
    assert (target.engine, target.engine_version) == ("vllm", "v0.29.0")  # the vllm-tpu image's tag
    assert target.hf_token is None and target.api_key_secret is None  # an open model, no API key


def test_the_profile_names_the_engine_that_ran_not_vllm_for_every_server():
    """A profile is evidence for its own engine only: SGLang's run must not size a vLLM stack."""
    target = bench_target(planned("sglang"))
    assert (target.engine, target.model) == ("sglang", "Qwen/Qwen3-30B-A3B")  # its model flag is --model-path
    assert target.server_port == 30000


def test_a_gated_model_behind_an_api_key_reads_both_secrets_as_the_server_does():
    target = bench_target(planned("vllm-gateway"))
    assert target.api_key_secret == ("hf-secret", "api_key")
    assert target.hf_token == ("hf-secret", "hf_api_token", "/var/run/secrets/huggingface/hf_api_token")
    # the Service, not the Gateway: bench measures the server, as GIQ profiles a model server
    assert target.base_url == "http://vllm-service.vllm.svc.cluster.local:8000"
    assert (target.topology, target.chips, target.machine_type) == ("2x4", 8, "ct6e-standard-8t")


def test_a_multi_host_slice_takes_the_slice_from_the_tpu_workers_and_the_address_from_the_serve_head():
    target = bench_target(planned("vllm-405b"))
    assert target.server_labels == {"app": "vllm-tpu", "tpu-stacks.dev/ray-node": "head"}
    assert (target.accelerator, target.topology, target.chips) == ("tpu-v6e-slice", "4x8", 32)
    assert target.model == "meta-llama/Llama-3.1-405B-Instruct"


@pytest.mark.parametrize(
    ("stack", "said"),
    [
        ("jetstream-gemma", "serves `jetstream-generate`, not the OpenAI completions API inference-perf drives"),
        ("raytrain", "has no server to bench (its plan has no smoke-test Job)"),
    ],
)
def test_a_stack_with_no_openai_server_is_refused_in_one_line(stack, said):
    with pytest.raises(UserError) as caught:
        bench_target(planned(stack))
    assert str(caught.value).startswith(f"--stack: {stack!r} {said};")
    assert "\n" not in str(caught.value)


def test_an_unknown_stack_is_refused_with_the_closest_name():
    with pytest.raises(UserError) as caught:
        load_plan(ROOT, "vllm-gatway")
    assert "did you mean 'vllm-gateway'?" in str(caught.value)
