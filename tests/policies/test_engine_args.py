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


@pytest.mark.parametrize(("torch_dtype", "served"), [("float32", "fp32"), (None, "fp32"), ("bfloat16", "bf16")])
def test_sglang_flags_give_the_request_the_component_sized_in_the_dtype_it_serves(monkeypatch, torch_dtype, served):
    """One dtype rule per engine, read by the plan and the pack: SGLang-JAX's `--dtype auto` keeps an fp32
    checkpoint in fp32 (sglang/engine.py SGLANG_DTYPES), where vLLM's would serve bf16."""
    from tests.sglang.test_plan import plan as sglang_plan_of
    from tpu_policies import engine_args
    from tpu_stacks.sglang import plan as sglang_plan

    shipped = sglang_plan_of().model
    files = {"float32": "fp32", "bfloat16": "bf16"}.get(torch_dtype or "")
    update = {"checkpoint_dtype": files, "config_torch_dtype": torch_dtype}
    changed = shipped.model_copy(update={"architecture": shipped.architecture.model_copy(update=update)})
    monkeypatch.setattr(sglang_plan, "lookup_model", lambda *_args, **_kwargs: changed)
    monkeypatch.setattr(engine_args, "lookup_model", lambda *_args, **_kwargs: changed)
    decided = sglang_plan_of()
    command = ["python3", "-m", "sgl_jax.launch_server", *decided.engine_args()]
    found = infer(template("us-docker.pkg.dev/p/r/sglang-jax:0.0.1.post1", [], command), {})
    assert decided.request.weight_dtype == served
    assert found.problem is None and found.request == decided.request


def test_each_engine_s_dtype_flags_are_its_own():
    """SGLang-JAX's `--kv-cache-dtype` takes bf16 and refuses fp8 at load (ledger: sglang.kv-dtype.bf16); vLLM's
    `--dtype` has no `bf16` (its ModelDType, ledger: vllm.flag.dtype-choices)."""
    sglang = ["python3", "-m", "sgl_jax.launch_server", "--model-path=Qwen/Qwen3-30B-A3B"]
    image = "us-docker.pkg.dev/p/r/sglang-jax:0.0.1.post1"
    assert infer(template(image, [], [*sglang, "--kv-cache-dtype=bf16"]), {}).request.kv_dtype == "bf16"
    assert "is not sizable" in infer(template(image, [], [*sglang, "--kv-cache-dtype=fp8_e4m3"]), {}).problem
    assert infer(template(image, [], [*sglang, "--dtype=float16"]), {}).request.weight_dtype == "fp16"
    vllm = ["--model=Qwen/Qwen3-30B-A3B"]
    assert infer(template(VLLM_IMAGE, [*vllm, "--dtype=bfloat16"]), {}).request.weight_dtype == "bf16"
    assert "is not sizable" in infer(template(VLLM_IMAGE, [*vllm, "--dtype=bf16"]), {}).problem


def test_a_dtype_spelled_in_another_case_is_not_sizable():
    """Both engines' argparse `choices` match exactly (vLLM's ModelDType and CacheDType, SGLang-JAX's lists: ledger
    vllm.flag.dtype-choices, sglang.flag.dtype-choices), so `--dtype BFloat16` stops the server at start: the pack
    must not size it as bf16."""
    sglang = ["python3", "-m", "sgl_jax.launch_server", "--model-path=Qwen/Qwen3-30B-A3B"]
    image = "us-docker.pkg.dev/p/r/sglang-jax:0.0.1.post1"
    assert "is not sizable" in infer(template(image, [], [*sglang, "--dtype=BFloat16"]), {}).problem
    assert "is not sizable" in infer(template(image, [], [*sglang, "--kv-cache-dtype=BF16"]), {}).problem
    vllm = ["--model=Qwen/Qwen3-30B-A3B"]
    assert "is not sizable" in infer(template(VLLM_IMAGE, [*vllm, "--dtype=BFloat16"]), {}).problem
    assert "is not sizable" in infer(template(VLLM_IMAGE, [*vllm, "--kv-cache-dtype=FP8"]), {}).problem
    assert "is not sizable" in infer(template(VLLM_IMAGE, [*vllm, "--dtype=AUTO"]), {}).problem


def test_maxtext_settings_in_a_rayjob_entrypoint_give_the_request_the_component_sized():
    decided = plan_of()
    worker = template("us-docker.pkg.dev/p/r/ray-maxtext:1", [], ["ray", "start"])
    found = infer(worker, {"spec": {"entrypoint": decided.entrypoint()}})
    assert TRAINER_PATH in decided.entrypoint()
    assert found.problem is None and found.request == decided.request


def _underscored(args: list[str]) -> list[str]:
    """Each `--flag` name written with underscores, as vLLM's parser also takes it (ledger:
    vllm.args.underscores-as-dashes): `--max-model-len=4096` -> `--max_model_len=4096`."""
    spelled = []
    for arg in args:
        name, eq, value = arg.partition("=")
        spelled.append("--" + name[2:].replace("-", "_") + eq + value if name.startswith("--") else arg)
    return spelled


def test_vllm_flags_written_with_underscores_are_read_as_vllm_reads_them():
    decided = plan(max_model_len=51200, max_num_batched_tokens=2048)
    args = _underscored(decided.engine_args())
    assert any("_" in a.partition("=")[0] for a in args if a.startswith("--"))  # the spelling under test is there
    found = infer(template(VLLM_IMAGE, args), {})
    assert found.problem is None and found.request == decided.request
    assert found.tensor_parallel == decided.tensor_parallel_size


def test_an_underscored_flag_is_not_read_for_an_engine_whose_parser_takes_dashes_only():
    """SGLang-JAX's argparse has no underscore spelling of `--tp-size`: the pack does not read one in."""
    from tpu_stacks.catalog.engines import engine
    from tpu_stacks.serving.engine_flags import flag_values

    assert flag_values(["--tp_size", "4"], engine("sglang")) == {"--tp_size": "4"}
    assert flag_values(["--tp_size", "4"], engine("vllm")) == {"--tp-size": "4"}
    assert flag_values(["--hf_overrides.rope_scaling", "x"], engine("vllm")) == {"--hf-overrides.rope_scaling": "x"}
