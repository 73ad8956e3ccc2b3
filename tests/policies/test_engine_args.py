"""The pack reads an engine's flags as the components mean them: for the arguments each component
writes, the request inferred from the flags alone (no annotations) is the request the component sized."""

import pytest

from tests.jetstream.test_plan import _gemma
from tests.raytrain.test_plan import plan_of
from tests.vllm.test_plan import plan
from tpu_policies.engine_args import infer
from tpu_policies.workloads import PodTemplate
from tpu_stacks.raytrain.spec import TRAINER_PATH
from tpu_stacks.vllm.spec import VLLM_IMAGE


def template(image, args, command=None):
    container = {"name": "c", "image": image, "args": args, "command": command or []}
    return PodTemplate("spec.template", {"containers": [container]}, {}, 1, None)


@pytest.mark.parametrize("spec", [{}, {"max_model_len": 51200, "max_num_batched_tokens": 2048}])
def test_vllm_flags_give_the_request_the_component_sized(spec):
    decided = plan(**spec)
    found = infer(template(VLLM_IMAGE, decided.engine_args()), {})
    assert found.problem is None and found.request == decided.request
    assert found.tensor_parallel == decided.tensor_parallel_size


@pytest.mark.parametrize("spec", [{}, {"flow": "download"}, {"quantize_weights": True, "quantize_kv_cache": True}])
def test_jetstream_flags_give_the_request_the_component_sized(spec):
    decided = _gemma(**spec)
    found = infer(template(decided.server_image, decided.server_args()), {})
    assert found.problem is None and found.request == decided.request


def test_maxtext_settings_in_a_rayjob_entrypoint_give_the_request_the_component_sized():
    decided = plan_of()
    worker = template("us-docker.pkg.dev/p/r/ray-maxtext:1", [], ["ray", "start"])
    found = infer(worker, {"spec": {"entrypoint": decided.entrypoint()}})
    assert TRAINER_PATH in decided.entrypoint()
    assert found.problem is None and found.request == decided.request
