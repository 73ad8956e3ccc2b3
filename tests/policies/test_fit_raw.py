"""tpu-model-fits-slice on raw programs: no project components, no tpu-stacks.dev annotations; the model and
its sizing inputs are read from the engine's own arguments (engine catalogue), judged by the same sizing code."""

import pytest

from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, raw, run
from tpu_stacks.objects.annotations import MODEL

FIT, SIZABLE = "tpu-model-fits-slice", "tpu-model-sizable"
V5E, V6E = "tpu-v5-lite-podslice", "tpu-v6e-slice"
VLLM_IMAGE = "vllm/vllm-tpu:v0.29.0"
JETSTREAM_IMAGE = "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pytorch-server:v0.2.3"
MAXTEXT_IMAGE = "us-docker.pkg.dev/my-proj/images/maxtext:2025-10-01"


def vllm_args(model="meta-llama/Llama-3.1-70B", tp=8, *extra):
    """The GKE tutorial's vLLM arguments ([K-VLLM] vllm-llama3-70b.yaml)."""
    return [
        "--host=0.0.0.0",
        "--port=8000",
        f"--tensor-parallel-size={tp}",
        "--max-model-len=4096",
        f"--model={model}",
        "--download-dir=/data",
        "--max-num-batched-tokens=512",
        "--max-num-seqs=128",
        *extra,
    ]


def vllm(topology, chips, args, notes=None, image=VLLM_IMAGE):
    command = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    return lambda: o.deployment("vllm-tpu", o.pod(V6E, topology, chips, image=image, command=command, args=args), notes)


def found(build):
    diagnostics = run(capture(build))
    assert not [d for d in diagnostics if "can't run policy" in d.message]
    return of(diagnostics, FIT), of(diagnostics, SIZABLE)


def test_vllm_model_that_cannot_fit_the_slice_it_selects_is_refused():
    (problem,), advisories = found(vllm("2x2", 4, vllm_args(tp=4)))
    assert problem.level == "mandatory" and advisories == []
    assert "Deployment serving/vllm-tpu: meta-llama/Llama-3.1-70B needs" in problem.message
    assert "read from its vllm arguments, no tpu-stacks.dev annotations" in problem.message
    assert "gets 4 v6e chips on 2x2" in problem.message and "use v6e 2x4" in problem.message


def test_the_same_model_on_the_tutorials_slice_passes():
    """No false positive: the tutorial's own Deployment (70B on v6e 2x4, tensor parallel 8) fits."""
    assert found(vllm("2x4", 8, vllm_args(tp=8))) == ([], [])


def test_tensor_parallel_below_the_chips_shards_over_fewer_chips():
    (problem,), _ = found(vllm("2x4", 8, vllm_args(tp=4)))
    assert "gets 4 v6e chips on 2x4" in problem.message and "--tensor-parallel-size=4" in problem.message


def test_longer_context_is_read_from_max_model_len():
    fits = vllm_args(tp=8)
    assert found(vllm("2x4", 8, fits)) == ([], [])
    longer = [a if not a.startswith("--max-model-len") else "--max-model-len=524288" for a in fits]
    (problem,), _ = found(vllm("2x4", 8, longer))
    assert "kv_cache 160.0 GiB" in problem.message  # 320 KiB per token x 524288


def test_fp8_kv_cache_and_weights_are_read_from_their_flags():
    """The context that does not fit in bf16 fits with fp8 weights and an fp8 KV cache."""
    longer = [a if not a.startswith("--max-model-len") else "--max-model-len=524288" for a in vllm_args(tp=8)]
    assert found(vllm("2x4", 8, [*longer, "--kv-cache-dtype=fp8", "--quantization", "fp8"])) == ([], [])


def test_vllm_serve_with_a_positional_model_and_any_image():
    args = ["serve", "meta-llama/Llama-3.1-70B", "--tensor-parallel-size", "4", "--max-model-len", "4096"]
    build = lambda: o.deployment(  # noqa: E731
        "v", o.pod(V6E, "2x2", 4, image="europe-docker.pkg.dev/p/r/server:1", command=["vllm"], args=args)
    )
    (problem,), _ = found(build)
    assert "meta-llama/Llama-3.1-70B needs" in problem.message
    small = [a.replace("Llama-3.1-70B", "Llama-3.1-8B") for a in args]
    assert found(lambda: o.deployment("v", o.pod(V6E, "2x2", 4, command=["vllm"], args=small))) == ([], [])


def test_an_unknown_model_is_an_advisory_not_a_silent_pass():
    fit, (advisory,) = found(vllm("2x2", 4, vllm_args(model="acme/unheard-of-70b", tp=4)))
    assert fit == [] and advisory.level == "advisory"
    assert "runs vllm v0.29.0 but --model: 'acme/unheard-of-70b' is not in the model catalogue" in advisory.message
    assert "the model's fit is not checked" in advisory.message


@pytest.mark.parametrize("method", ["awq", "tpu_int8"])  # tpu_int8: torch_xla's, not a method of v0.29.0
def test_a_quantization_the_memory_model_cannot_size_is_an_advisory(method):
    fit, (advisory,) = found(vllm("2x2", 4, vllm_args(tp=4) + [f"--quantization={method}"]))
    assert fit == [] and f"--quantization {method} is not one the memory model sizes (fp8)" in advisory.message


def test_annotations_win_over_the_engine_arguments():
    notes = o.serving_notes("meta-llama/Llama-3.1-8B", 4)
    assert found(vllm("2x2", 4, vllm_args(tp=4), notes=notes)) == ([], [])
    notes = {MODEL: "meta-llama/Llama-3.1-70B"}
    (problem,), _ = found(vllm("2x2", 4, vllm_args(model="meta-llama/Llama-3.1-8B", tp=4), notes=notes))
    assert "read from its vllm arguments" not in problem.message


def jetstream(topology, chips, size="7b", name="gemma", batch=32):
    """The tutorial's JetStream-PyTorch v0.2.3 arguments ([K-JETSTREAM-CONV])."""
    args = [
        f"--size={size}",
        f"--model_name={name}",
        f"--batch_size={batch}",
        "--max_cache_length=2048",
        "--quantize_weights=False",
        "--quantize_kv_cache=False",
        "--tokenizer_path=/models/pytorch/gemma-7b-it/final/bf16/tokenizer.model",
        "--checkpoint_path=/models/pytorch/gemma-7b-it/final/bf16/model.safetensors",
    ]
    return lambda: o.deployment("jetstream", o.pod(V5E, topology, chips, image=JETSTREAM_IMAGE, args=args))


def test_jetstream_tutorial_on_v5e_2x4_passes_and_on_one_chip_is_refused():
    assert found(jetstream("2x4", 8)) == ([], [])
    (problem,), _ = found(jetstream("1x1", 1, batch=1))
    assert "google/gemma-7b-it needs" in problem.message and "read from its jetstream arguments" in problem.message
    assert "gets 1 v5e chips on 1x1" in problem.message


def test_jetstream_download_flow_and_an_unknown_size():
    args = ["--model_id=meta-llama/Meta-Llama-3-8B", "--override_batch_size=30", "--enable_model_warmup=True"]
    build = lambda: o.deployment("js", o.pod(V5E, "2x4", 8, image=JETSTREAM_IMAGE, args=args))  # noqa: E731
    assert found(build) == ([], [])
    fit, (advisory,) = found(jetstream("2x4", 8, size="70b", name="llama-3"))
    assert fit == [] and "--model_name llama-3 --size 70b is not a model the catalogue knows" in advisory.message


def maxtext(accelerator, topology, hosts, model="llama3-8b"):
    args = [
        "python3",
        "-m",
        "MaxText.train",
        "/app/maxtext/src/MaxText/configs/base.yml",
        f"model_name={model}",
        "per_device_batch_size=1",
        "max_target_length=4096",
        "ici_fsdp_parallelism=4",
        "ici_tensor_parallelism=4",
    ]
    worker = o.pod(accelerator, topology, 4, image=MAXTEXT_IMAGE, command=["bash", "-c", " ".join(args)])
    return lambda: o.raycluster("maxtext", worker, hosts)


def test_maxtext_training_read_from_its_settings():
    assert found(maxtext(V6E, "4x4", 4)) == ([], [])
    (problem,), _ = found(maxtext(V5E, "2x2", 1))
    assert "gradients" in problem.message and "read from its maxtext arguments" in problem.message
    fit, (advisory,) = found(maxtext(V6E, "4x4", 4, model="my-own-13b"))
    assert fit == [] and "model_name: 'my-own-13b' is not in the model catalogue" in advisory.message


def test_a_container_no_engine_is_recognised_in_stays_unjudged():
    assert found(lambda: o.deployment("plain", o.pod(V5E, "1x1", 1, args=["--model=meta-llama/Llama-3.1-70B"]))) == (
        [],
        [],
    )


def test_maxtext_weight_dtype_is_read_and_an_unsizable_one_is_an_advisory():
    fit, (advisory,) = found(lambda: o.raycluster("m", _maxtext_worker(["weight_dtype=int4"]), 4))
    assert fit == [] and "weight_dtype=int4 is not one the memory model sizes" in advisory.message
    assert found(lambda: o.raycluster("m", _maxtext_worker(["weight_dtype=bfloat16"]), 4)) == ([], [])


def _maxtext_worker(extra):
    args = ["/app/maxtext/src/MaxText/configs/base.yml", "model_name=llama3-8b", "per_device_batch_size=1", *extra]
    return o.pod(V6E, "4x4", 4, image=MAXTEXT_IMAGE, command=["python3", "-m", "MaxText.train"], args=args)


def test_arguments_unknown_at_preview_skip_the_check_without_an_advisory():
    spec = o.pod(V6E, "2x2", 4, image=VLLM_IMAGE, args=[f"--model={UNKNOWN_STRING}"])
    spec["containers"][0]["args"] = UNKNOWN_STRING
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {"spec": spec}},
    }
    diagnostics = run([raw("kubernetes:apps/v1:Deployment", "d", deployment)])
    assert of(diagnostics, FIT) == of(diagnostics, SIZABLE) == []
    assert not [d for d in diagnostics if "can't run policy" in d.message]


def test_without_max_model_len_the_sizing_default_context_is_judged():
    args = [a for a in vllm_args(tp=4) if not a.startswith("--max-model-len")]
    (problem,), _ = found(vllm("2x2", 4, args))
    assert "meta-llama/Llama-3.1-70B needs" in problem.message
