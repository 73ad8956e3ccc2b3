"""The Inference Gateway catalogue: every catalogued engine says whether the endpoint picker can route to it."""

from tpu_stacks.catalog.engines import engines
from tpu_stacks.catalog.engines.record import EngineName
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.inference_gateway import (
    EPP_IMAGE,
    INFERENCE_EXTENSION_VERSION,
    gateway_support,
    serving_api,
    serving_apis,
)
from tpu_stacks.jetstream.engine import JETSTREAM


def test_every_catalogued_engine_has_one_serving_api():
    """Collected on each call (a workload folder's engine, a test's toy, counts)."""
    names = [api.engine for api in serving_apis()]
    assert sorted(names) == sorted(set(names)) == sorted({e.engine for e in engines()})
    assert set(EngineName.__args__) == set(names)


def test_vllm_speaks_openai_on_the_port_it_serves_metrics_on_and_jetstream_does_not():
    """vLLM's OpenAI server answers /metrics on its API port, so the two catalogued ports are one fact."""
    api = serving_api(VLLM)
    assert api.openai and api.port_flag == "--port" and api.default_port == VLLM.metrics_port
    assert not any(serving_api(version).openai for version in JETSTREAM)


def test_the_picker_image_is_tagged_with_the_pinned_release():
    assert EPP_IMAGE.endswith(f"/gateway-api-inference-extension/epp:{INFERENCE_EXTENSION_VERSION}")
    assert INFERENCE_EXTENSION_VERSION.startswith("v") and "latest" not in EPP_IMAGE


def test_every_engine_a_folder_declares_answers_whether_the_gateway_fronts_it():
    """A capability, not a name list: each declared engine says yes or no, and why in a sentence."""
    from tpu_stacks.catalog.engines.declared import declarations

    for declared in declarations():
        answer = gateway_support(declared.name)
        assert answer is declared.gateway and len(answer.why) > 40
        assert not answer.fronts or declared.versions[-1].metrics, "the picker scores replicas by their gauges"


def test_every_catalogued_engine_answers_whether_the_gateway_fronts_it_and_only_vllm_says_yes():
    """One answer per engine, asked by the pack (inference-pool-serves) and vLLM's gateway plan alike: a server the
    picker fronts speaks OpenAI's APIs and exports gauges; SGLang-JAX speaks OpenAI but exports none."""
    answers = {api.engine: gateway_support(api.engine) for api in serving_apis()}
    assert {name for name, answer in answers.items() if answer.fronts} == {"vllm"}
    for name, answer in answers.items():
        assert not answer.fronts or serving_api(name).openai, name
        assert len(answer.why) > 40, name
    assert serving_api("sglang").openai and not answers["sglang"].fronts
