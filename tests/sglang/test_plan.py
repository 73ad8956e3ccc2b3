"""Pure decisions of the sglang workload: the plan, with no resources and no mocks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.sglang import engine as sglang_engine
from tpu_stacks.sglang import plan as sglang_plan
from tpu_stacks.sglang.args import SglangStackArgs
from tpu_stacks.sglang.engine import SGLANG, SGLANG_ARCHITECTURES
from tpu_stacks.sglang.plan import SglangPlan, plan_sglang
from tpu_stacks.sglang.spec import IMAGE_DIR, MEM_FRACTION_STATIC, PORT, SglangSpec

CLUSTER = {"project": "proj", "location": "us-central1-b", "name": "sg"}


def plan(cluster: dict | None = None, token: bool = False, **spec) -> SglangPlan:
    settings = {"model": "Qwen/Qwen3-30B-A3B", "source_ranges": ["10.128.0.0/20"], **spec}
    return plan_sglang(SglangSpec(**settings), ClusterSpec(**{**CLUSTER, **(cluster or {})}), token)


def refusal(**spec) -> str:
    with pytest.raises(UserError) as raised:
        plan(**spec)
    return str(raised.value)


def test_schema_args_and_validated_spec_have_the_same_fields():
    assert set(SglangStackArgs.__annotations__) - {"cluster", "hf_token"} == set(SglangSpec.model_fields)


def test_qwen3_30b_a3b_is_sized_to_one_v6e_host_with_the_servers_flags():
    decided = plan()
    assert (decided.shape.generation, decided.shape.topology, decided.shape.nodes) == ("v6e", "2x2", 1)
    assert decided.tensor_parallel_size == 4
    assert decided.engine_args() == [
        "--host=0.0.0.0",
        f"--port={PORT}",
        "--model-path=Qwen/Qwen3-30B-A3B",
        "--tp-size=4",
        "--context-length=4096",
        f"--mem-fraction-static={MEM_FRACTION_STATIC:g}",
        "--download-dir=/data",
    ]
    assert PORT == 30000 and MEM_FRACTION_STATIC == 0.88  # the wheel's defaults (the ledger rows)


def test_tensor_parallelism_is_every_device_of_the_sized_slice():
    decided = plan(topology="2x4")
    assert decided.tensor_parallel_size == 8 and "--tp-size=8" in decided.engine_args()


def test_radix_cache_is_on_unless_turned_off_and_the_optional_flags_follow_the_spec():
    assert "--disable-radix-cache" not in plan().engine_args()
    args = plan(radix_cache=False, max_running_requests=64, extra_args=["--dtype=bfloat16"]).engine_args()
    assert args[-3:] == ["--max-running-requests=64", "--disable-radix-cache", "--dtype=bfloat16"]


@pytest.mark.parametrize("written", [["--tp-size=2"], ["--tensor-parallel-size", "2"], ["--tp-size", "2"]])
def test_a_tensor_parallel_flag_that_contradicts_the_slice_is_refused_by_its_argument(written):
    assert refusal(topology="2x2", extra_args=written).startswith(
        "sglang.extraArgs[0]: "
    ) and "has 4 devices" in refusal(topology="2x2", extra_args=written)


def test_a_matching_tensor_parallel_flag_replaces_the_stacks():
    args = plan(topology="2x2", extra_args=["--tensor-parallel-size=4"]).engine_args()
    assert "--tp-size=4" not in args and args[-1] == "--tensor-parallel-size=4"
    split = ["--tensor-parallel-size", "4", "--dtype", "bfloat16"]  # the value is the argument after the flag
    assert plan(topology="2x2", extra_args=split).engine_args()[-4:] == split


def test_arguments_that_are_not_the_tensor_parallel_flag_are_not_read_as_its_value():
    """`--dtype bfloat16` is another flag and its value; a trailing `--tp-size` with no value after it is the
    server's to refuse (argparse: expected one argument): the plan reads nothing from beyond the list."""
    assert plan(topology="2x2", extra_args=["--dtype", "bfloat16"]).engine_args()[-3:] == [
        "--download-dir=/data",
        "--dtype",
        "bfloat16",
    ]
    args = plan(topology="2x2", extra_args=["--dtype=bfloat16", "--tp-size"]).engine_args()
    assert "--tp-size=4" in args and args[-1] == "--tp-size"


@pytest.fixture
def any_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizing and token rules, apart from the model-class rule: the Llama class counted as served for one test."""
    monkeypatch.setattr(sglang_engine, "SGLANG_ARCHITECTURES", (*SGLANG_ARCHITECTURES, "LlamaForCausalLM"))


def test_a_model_class_the_pinned_registry_lacks_is_refused_in_one_line_before_sizing():
    line = refusal(model="meta-llama/Llama-3.1-405B-Instruct")
    assert line.startswith("sglang.model: 'meta-llama/Llama-3.1-405B-Instruct' is a LlamaForCausalLM")
    assert "sglang-jax 0.0.1.post1 serves only QWenLMHeadModel, Qwen3ForCausalLM, Qwen3MoeForCausalLM" in line
    assert "\n" not in line and "serve it with vllm" in line
    assert SGLANG_ARCHITECTURES == ("QWenLMHeadModel", "Qwen3ForCausalLM", "Qwen3MoeForCausalLM")
    assert plan().model.architecture.architecture == "Qwen3MoeForCausalLM"  # the shipped model's class passes


@pytest.mark.usefixtures("any_class")
def test_a_model_that_needs_more_than_one_host_is_refused_naming_the_model():
    line = refusal(model="meta-llama/Llama-3.1-405B-Instruct")
    assert line.startswith("sglang.model: 'meta-llama/Llama-3.1-405B-Instruct' is sized to v6e")
    assert "from one host" in line


def test_a_generation_the_pinned_build_does_not_serve_is_refused():
    assert SGLANG.served_generations == ("v6e",)
    line = refusal(tpu_generation="v5e")
    assert line.startswith(
        "sglang.tpuGeneration: 'v5e' is not a generation the pinned SGLang-JAX 0.0.1.post1 is known to serve (v6e); "
        "use tpuGeneration: v6e"
    )


def test_an_unpinned_image_is_refused_and_a_pinned_one_replaces_the_build():
    assert refusal(image="lmsysorg/sglang-jax:latest").startswith("sglang.image: 'lmsysorg/sglang-jax:latest'")
    own = plan(image="lmsysorg/sglang-jax:v0.0.1.post1")
    assert not own.builds_image and plan().builds_image


def test_the_image_build_names_the_folder_the_pinned_wheel_and_the_stacks_repository():
    decided = plan()
    assert decided.repository == "sglang-jax-sg"
    account = "projects/proj/serviceAccounts/sglang-jax-sg-builder@proj.iam.gserviceaccount.com"
    command = decided.build_command(
        "us-central1-docker.pkg.dev/proj/sglang-jax-sg/sglang-jax:0.0.1.post1", account, "src"
    )
    project, region = decided.cluster.spec.project, decided.cluster.region
    assert command.startswith(f"gcloud builds submit {IMAGE_DIR} --project={project} --region={region} ")
    assert f" --config={IMAGE_DIR}/cloudbuild.yaml " in command
    # as the stack's builder account (the default build account may lack the roles), the source where it may read
    assert command.endswith(f" --service-account={account} --gcs-source-staging-dir=gs://src/source")
    assert decided.builder_account == "sglang-jax-sg-builder"
    assert "_SGLANG_JAX_VERSION=0.0.1.post1" in command and decided.image_path() == "sglang-jax:0.0.1.post1"


def test_an_internal_load_balancer_without_clients_is_refused():
    with pytest.raises(UserError, match=r"^sglang.sourceRanges: \[\] is empty for the internal load balancer"):
        plan_sglang(SglangSpec(model="Qwen/Qwen3-30B-A3B"), ClusterSpec(**CLUSTER), False)
    assert plan(exposure="cluster", source_ranges=[]).spec.exposure == "cluster"


@pytest.mark.usefixtures("any_class")
def test_a_gated_model_needs_the_token_after_every_other_check():
    with pytest.raises(UserError, match=r"hf_token"):
        plan(model="meta-llama/Llama-3.1-8B")
    assert plan(model="meta-llama/Llama-3.1-8B", token=True).model.architecture.gated


def test_replicas_are_a_fixed_pool_of_single_host_nodes():
    pool = plan(replicas=3).pool
    assert (pool.autoscaling_min, pool.autoscaling_max) == (3, 3)


@pytest.mark.parametrize(
    ("torch_dtype", "served"), [("float32", "fp32"), (None, "fp32"), ("bfloat16", "bf16"), ("half", "fp16")]
)
def test_the_server_is_sized_in_the_dtype_sglang_jax_serves_at_dtype_auto(monkeypatch, torch_dtype, served):
    """SGLang-JAX 0.0.1.post1 at `--dtype auto` (its default) keeps the config's `torch_dtype`, fp32 when it names
    none, and its KV cache takes the model's dtype (ledger: sglang.default.dtype, sglang.dtype.auto-keeps-config,
    sglang.dtype.fp32-without-one, sglang.kv-dtype.auto-is-model): not vLLM's downcast of fp32 to bf16."""
    shipped = plan().model
    files = {"float32": "fp32", "bfloat16": "bf16", "half": "fp16"}.get(torch_dtype or "")
    update = {"checkpoint_dtype": files, "config_torch_dtype": torch_dtype}
    changed = shipped.model_copy(update={"architecture": shipped.architecture.model_copy(update=update)})
    monkeypatch.setattr(sglang_plan, "lookup_model", lambda *_args, **_kwargs: changed)
    request = plan().request
    assert (request.weight_dtype, request.kv_dtype) == (served, served)


def test_a_config_that_names_only_dtype_is_served_in_fp32_as_sglang_jax_s_transformers_reads_it(monkeypatch):
    """transformers 5 writes config.json's dtype as `dtype`; SGLang-JAX reads `config.torch_dtype`, which its pinned
    transformers 4.55 fills from the `torch_dtype` key only (ledger: sglang.dtype.reads-torch-dtype,
    transformers-sglang.config.torch-dtype): such a bf16 checkpoint is served in fp32, twice its files' bytes. vLLM
    reads `dtype` first (ledger: vllm.dtype.from-config) and serves it in bf16."""
    from tpu_stacks.catalog.engines.vllm import VLLM_DTYPES
    from tpu_stacks.catalog.hf_config import architecture_from_config

    folder = Path(__file__).parents[2] / "components/tpu_stacks/catalog/hf_configs/Qwen/Qwen3-30B-A3B"
    raw = json.loads((folder / "config.json").read_text())
    assert raw["torch_dtype"] == "bfloat16"
    written_by_5 = {**{k: v for k, v in raw.items() if k != "torch_dtype"}, "dtype": "bfloat16"}
    both = {**raw, "dtype": "bfloat16"}
    for config, sglang in ((raw, "bf16"), (written_by_5, "fp32"), (both, "bf16")):
        architecture = architecture_from_config(config, name="Qwen/Qwen3-30B-A3B", source="test")
        assert architecture.checkpoint_dtype == "bf16" and VLLM_DTYPES.auto(architecture) == "bf16"
        assert sglang_engine.SGLANG_DTYPES.auto(architecture) == sglang
    shipped = plan().model
    architecture = architecture_from_config(written_by_5, name="Qwen/Qwen3-30B-A3B", source="test")
    changed = shipped.model_copy(update={"architecture": architecture})
    monkeypatch.setattr(sglang_plan, "lookup_model", lambda *_args, **_kwargs: changed)
    request = plan().request
    assert (request.weight_dtype, request.kv_dtype) == ("fp32", "fp32")


def test_extra_args_that_would_replace_a_flag_the_stack_writes_are_refused():
    """SGLang-JAX's argparse keeps a flag's last value too, and extraArgs come last (serving/engine_flags.py);
    `--model` is `--model-path`'s other spelling, and the radix cache switch belongs to sglang.radixCache."""
    assert refusal(extra_args=["--context-length", "8192"]) == (
        "sglang.extraArgs[0]: '--context-length 8192' sets --context-length, which the stack writes from "
        "sglang.contextLength (4096): the slice, its memory and its traffic were sized for the key's; set "
        "sglang.contextLength instead"
    )
    assert refusal(extra_args=["--model=Qwen/Qwen3-8B"]).startswith(
        "sglang.extraArgs[0]: '--model=Qwen/Qwen3-8B' sets --model, which the stack writes from sglang.model"
    )
    assert refusal(extra_args=["--disable-radix-cache"]).startswith(
        "sglang.extraArgs[0]: '--disable-radix-cache' sets --disable-radix-cache, which the stack writes from "
        "sglang.radixCache (false)"
    )
    assert plan(radix_cache=False, extra_args=["--disable-radix-cache"]).engine_args()[-1] == "--disable-radix-cache"
    same = f"--mem-fraction-static={MEM_FRACTION_STATIC:.3f}"  # the stack's value, written with more digits
    assert plan(extra_args=[same]).engine_args()[-1] == same


def test_the_prefill_chunk_extra_args_give_sizes_the_activations():
    """`--chunked-prefill-size` (or an abbreviation argparse takes for it) sizes one prefill step; 0 or less turns
    chunking off and a prompt is prefilled whole (ledger: sglang.chunked-prefill.disabled)."""
    default, small = plan(), plan(extra_args=["--chunked-prefill-size=1024"])
    assert (default.request.prefill_tokens, small.request.prefill_tokens) == (sglang_plan.PREFILL_TOKENS, 1024)
    assert small.verdict.memory.part("overhead") < default.verdict.memory.part("overhead")  # one prefill step's
    assert plan(extra_args=["--chunked", "512"]).request.prefill_tokens == 512
    whole = plan(context_length=8192, extra_args=["--chunked-prefill-size", "-1"])
    assert (
        whole.request.prefill_tokens
        == 8192
        == plan(context_length=8192, extra_args=["--chunked-prefill-size=0"]).request.prefill_tokens
    )


EVERY_KEY = {"radix_cache": False, "max_running_requests": 64}  # so that every flag the stack can write is written
WRITES = [a.split("=")[0] for a in plan(**EVERY_KEY).engine_args() if not a.startswith("--tp-size")]


@pytest.mark.parametrize("flag", WRITES)
def test_every_flag_the_stack_writes_is_refused_with_another_value(flag):
    """Each flag `engine_args` writes (read from the arguments, not from `written_flags`), named by the key that
    sets it or as fixed by the stack; the radix cache switch is refused while the key keeps the cache on."""
    written = sglang_plan.written_flags(SglangSpec(model="Qwen/Qwen3-30B-A3B"), "Qwen/Qwen3-30B-A3B")[flag]
    given = flag if flag == "--disable-radix-cache" else f"{flag}=12345"
    message = refusal(extra_args=[given])
    assert message.startswith(f"sglang.extraArgs[0]: '{given}' sets {flag}, which the stack")
    assert (written.key or "fixes at") in message


def test_the_dtypes_extra_args_give_are_the_ones_the_slice_is_sized_in():
    """SGLang-JAX's own dtype rule (sglang/engine.py): fp32 weights double the weights the slice must hold."""
    fp32 = plan(extra_args=["--dtype", "float32"])
    assert fp32.request.weight_dtype == "fp32"
    assert fp32.verdict.memory.part("weights") == pytest.approx(2 * plan().verdict.memory.part("weights"))
    assert refusal(extra_args=["--kv-cache-dtype=fp8"]).startswith(
        "sglang.extraArgs[0]: '--kv-cache-dtype=fp8' --dtype/--kv-cache-dtype None/fp8 is not sizable"
    )


def test_an_abbreviated_flag_is_the_flag_argparse_takes_it_for():
    """SGLang-JAX's argparse keeps abbreviations on (ledger: sglang.args.abbreviations): `--context` is
    `--context-length`, which the stack writes."""
    assert "sglang.contextLength" in refusal(extra_args=["--context=32768"])
    assert "sglang.memFractionStatic" in refusal(extra_args=["--mem-frac=0.95"])
    assert "sglang.radixCache" in refusal(extra_args=["--disable-radix"])


def test_the_keys_own_choices_cannot_be_written_in_extra_args():
    """`--tp=2` is `--tp-size` to argparse; a key left unset is no value extraArgs may repeat; the radix-cache switch
    takes no value (SGLang-JAX's store_true refuses `=false` at start)."""
    assert "'--tp=2' sets tensor parallelism 2" in refusal(extra_args=["--tp=2"])
    assert "sglang.maxRunningRequests (unset)" in refusal(extra_args=["--max-running-requests=unset"])
    assert "gives a value to a switch" in refusal(extra_args=["--disable-radix-cache=false"])
    assert "sglang.radixCache" in refusal(extra_args=["--disable-radix-cache"])
    assert plan(radix_cache=False, extra_args=["--disable-radix-cache"]).engine_args()[-1] == "--disable-radix-cache"
