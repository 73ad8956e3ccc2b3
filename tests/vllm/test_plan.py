"""Pure decisions of the vLLM workload: the slice, the cluster that holds it and the engine's flags,
decided once by `plan_vllm` with no resources and no mocks."""

import pytest

from tests.clients import CLIENTS
from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.errors import UserError
from tpu_stacks.sizing import tensor_parallel_size
from tpu_stacks.vllm.plan import POOL, plan_vllm, written_flags
from tpu_stacks.vllm.spec import VllmSpec

CLUSTER = ClusterSpec(project="proj", location="us-central1-b")


def plan(cluster: ClusterSpec = CLUSTER, **spec):
    fields = {"model": "meta-llama/Llama-3.1-70B", "source_ranges": CLIENTS, **spec}
    return plan_vllm(VllmSpec(**fields), cluster, hf_token_given=True, api_key_given=False)


def test_the_tutorial_slice_and_its_one_pool_are_decided_together():
    decided = plan()
    shape = decided.shape
    assert (shape.generation, shape.topology, shape.machine_type) == ("v6e", "2x4", "ct6e-standard-8t")
    (pool,) = decided.cluster.pools  # the cluster holds exactly the slice the model was sized for
    assert pool is decided.pool and pool.name == POOL and pool.shape == shape
    assert (pool.autoscaling_min, pool.autoscaling_max) == (1, 2)  # one TPU VM per replica
    assert decided.tensor_parallel_size == tensor_parallel_size(shape) == 8
    assert "--tensor-parallel-size=8" in decided.engine_args()
    assert decided.cluster.spec.addons.gcs_fuse and decided.cluster.spec.addons.managed_prometheus


def test_replicas_bound_the_pool_and_capacity_follows_the_section():
    decided = plan(replicas={"min": 2, "max": 4}, spot=True)
    assert (decided.pool.autoscaling_min, decided.pool.autoscaling_max) == (2, 4)
    assert decided.pool.spot and decided.pool.node_selector()["cloud.google.com/gke-spot"] == "true"


def test_the_sovereign_region_stays_whole():
    """u-france-east1 has three dash-separated parts and is still a region (it once became U-FRANCE)."""
    sovereign = ClusterSpec(project="proj", location="u-france-east1-a", universe="s3ns")
    assert plan(sovereign).cluster.region == "u-france-east1"


@pytest.mark.parametrize(
    ("cluster", "spec", "message"),
    [
        (CLUSTER, {"reservation": "Bad_Res"}, "vllm.reservation: 'Bad_Res' is not a reservation name"),
        (CLUSTER, {"spot": True, "reservation": "r1"}, "vllm.spot: True cannot consume a reservation"),
        (
            CLUSTER.model_copy(update={"slices": [{"generation": "v6e", "topology": "2x4"}]}),
            {},
            "cluster.slices: '1 slice(s)' are derived from vllm.model",
        ),
        (
            ClusterSpec(project="proj", location="us-central1-b", addons={"gcsFuse": False}),
            {},
            "cluster.addons.gcsFuse: False is required by VllmStack",
        ),
    ],
)
def test_refusals_name_the_key_the_user_wrote(cluster, spec, message):
    with pytest.raises(UserError) as refused:
        plan(cluster, **spec)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize("mode", ["remote", "standard"])
def test_the_default_repository_is_the_stacks_own(mode):
    """Repository ids are unique per project and region: the default carries the stack's cluster name."""
    registry = {"mode": mode, "image": "vllm-tpu:v0.9.2"} if mode == "standard" else {"mode": mode}
    named = ClusterSpec(project="proj", location="us-central1-b", name="serving-a")
    assert plan(named, registry=registry).spec.registry.repository == "vllm-tpu-serving-a"
    assert plan(registry=registry).spec.registry.repository == "vllm-tpu-tpu-cluster"  # the default cluster name


def test_a_user_set_repository_is_kept_and_no_registry_has_none():
    assert plan(registry={"mode": "remote", "repository": "shared-mirror"}).spec.registry.repository == "shared-mirror"
    assert plan().spec.registry.repository is None  # mode none declares no repository
    with pytest.raises(UserError, match=r"^vllm.registry.repository: 'Mirror_1' is not a valid Artifact Registry"):
        plan(registry={"mode": "remote", "repository": "Mirror_1"})


def _sidecar(decided) -> tuple[dict[str, str], list]:
    from tpu_stacks.vllm.pod import pod_template

    template = pod_template(decided, decided.pool, {"app": "vllm"}, "bucket", "vllm", None, "image")
    return template.metadata.annotations, template.spec.volumes


def _gib(quantity: str) -> int:
    assert quantity.endswith("Gi"), quantity
    return int(quantity.removesuffix("Gi"))


def test_the_sidecars_ephemeral_storage_covers_the_pods_disk_and_the_staged_download():
    """The sidecar's limit is the pod's only ephemeral-storage limit, so kubelet compares it with the whole
    pod's disk use: the 20 GiB XLA cache and the ~140 GB download the mount may stage (was 10 GiB)."""
    decided = plan()
    annotations, volumes = _sidecar(decided)
    disk = sum(
        _gib(v.empty_dir.size_limit) for v in volumes if v.empty_dir is not None and v.empty_dir.medium != "Memory"
    )
    assert disk == 20 + 2 + 2  # the XLA compile cache, /tmp and HOME (read-only root: k8s.security)
    weights_gib = decided.verdict.memory.part("weights") / 1024**3
    request = _gib(annotations["gke-gcsfuse/ephemeral-storage-request"])
    limit = _gib(annotations["gke-gcsfuse/ephemeral-storage-limit"])
    assert disk < request < disk + 10  # kept: the cache plus writable layers and logs, not the staging
    assert limit - request >= weights_gib > 130  # plus every weight file the download may stage


def test_without_a_compile_cache_the_sidecar_keeps_only_its_overhead():
    annotations, _ = _sidecar(plan(compile_cache=False))
    assert _gib(annotations["gke-gcsfuse/ephemeral-storage-request"]) < 10


# -- the numbers and the refusals, pinned (mutation testing found them unasserted) -------------------
# vLLM defaults (vllm/spec.py, the tutorial's flags): port 8000, max-model-len 4096, 512 batched tokens,
# 128 sequences, weights under /data. Llama 3.1 70B is 70.55B parameters (tests/catalog/test_models.py).


def test_the_engine_flags_in_order():
    assert plan().engine_args() == [
        "--host=0.0.0.0",
        "--port=8000",
        "--tensor-parallel-size=8",
        "--max-model-len=4096",
        "--model=meta-llama/Llama-3.1-70B",
        "--download-dir=/data",
        "--max-num-batched-tokens=512",
        "--max-num-seqs=128",
    ]
    assert plan(extra_args=["--enable-prefix-caching"]).engine_args()[-1] == "--enable-prefix-caching"


def test_the_sizing_request_follows_the_flags():
    request = plan(max_model_len=2048, max_num_batched_tokens=256).request
    assert (request.engine, request.context, request.batch, request.prefill_tokens) == ("vllm", 2048, 1, 256)


def test_the_file_cache_holds_the_weights_plus_ten_percent():
    # 70.55B params x 2 bytes (bf16) x 1.1 = 155.2 GB = 144.6 GiB -> 145 whole GiB
    assert plan().cache_gib == 145


def test_the_compile_cache_key_names_model_slice_tp_and_build():
    # the default image's tag (a longer tag is cut to 40 characters: a full commit id fits)
    assert plan().compile_cache_prefix == "xla-cache/meta-llama-llama-3.1-70b/v6e-2x4-tp8/v0.29.0"
    standard = plan(registry={"mode": "standard", "image": "vllm-tpu:v0.9.2"})
    assert standard.compile_cache_prefix == "xla-cache/meta-llama-llama-3.1-70b/v6e-2x4-tp8/v0.9.2"
    # the multi-host server image's tag keeps its vLLM part: a new vLLM under the same Ray is a new key
    served = plan(registry={"mode": "standard", "image": "vllm-tpu:serve-ray2.60.0-vllm0.29.0"})
    assert served.compile_cache_prefix.endswith("/v6e-2x4-tp8/serve-ray2.60.0-vllm0.29.0")
    commit = plan(image="docker.io/vllm/vllm-tpu:" + "a" * 40 + "b" * 8)
    assert commit.compile_cache_prefix.endswith("/" + "a" * 40)


def test_an_hpa_only_when_replicas_may_change():
    assert plan().autoscales  # 1..2 by default
    assert not plan(replicas={"min": 2, "max": 2}).autoscales
    with pytest.raises(UserError, match=r"^vllm.replicas: '3..2' has min above max; set min <= max$"):
        plan(replicas={"min": 3, "max": 2})


def test_secrets_a_setting_needs_are_required():
    with pytest.raises(UserError, match=r"^hf_token is required: meta-llama/Llama-3.1-70B is gated"):
        plan_vllm(VllmSpec(model="meta-llama/Llama-3.1-70B", source_ranges=CLIENTS), CLUSTER, False, False)
    qwen = VllmSpec(model="Qwen/Qwen2.5-1.5B-Instruct", source_ranges=CLIENTS)  # open weights: no token needed
    assert plan_vllm(qwen, CLUSTER, hf_token_given=False, api_key_given=False).shape.topology == "1x1"
    with pytest.raises(UserError, match=r"^api_key_secret is required when vllm.apiKey is true"):
        plan(api_key=True)
    assert plan_vllm(
        VllmSpec(model="meta-llama/Llama-3.1-70B", api_key=True, source_ranges=CLIENTS), CLUSTER, True, True
    ).spec.api_key


def test_a_tensor_parallelism_that_divides_the_heads():
    # v6e 4x4 is four ct6e-standard-4t VMs: served by a RayService (tests/vllm/test_multihost.py), whose
    # image must carry Ray Serve: the upstream vLLM image is refused in one line naming the registry mode
    with pytest.raises(UserError, match=r"^vllm.registry.mode: 'none' runs the vLLM image .* on the multi-host 4x4"):
        plan(topology="4x4")
    # Qwen2.5 1.5B has 12 query heads: tp 8 (v6e 2x4) does not divide them, tp 4 (2x2) does
    qwen = {"model": "Qwen/Qwen2.5-1.5B-Instruct", "source_ranges": CLIENTS}
    with pytest.raises(
        UserError, match=r"^vllm.topology: '2x4' gives tensor parallelism 8 \(v6e devices\), which does not divide"
    ):
        plan_vllm(VllmSpec(**qwen, topology="2x4"), CLUSTER, hf_token_given=False, api_key_given=False)
    assert plan_vllm(VllmSpec(**qwen, topology="2x2"), CLUSTER, False, False).tensor_parallel_size == 4


def test_a_forced_topology_is_named_as_the_users():
    """A model sized to a multi-host slice is no longer refused for it (the RayService serves it); a forced
    topology's refusal names vllm.topology, the key the user wrote."""
    standard = {"mode": "standard", "image": "vllm-tpu:serve-ray2.60.0"}
    v5e_zone = ClusterSpec(project="proj", location="us-east5-b")
    sized = plan_vllm(
        VllmSpec(model="meta-llama/Llama-3.1-405B", tpu_generation="v5e", registry=standard, source_ranges=CLIENTS),
        v5e_zone,
        True,
        False,
    )
    assert sized.multi_host and sized.shape.generation == "v5e" and sized.shape.nodes > 1
    # Qwen on v6e with no topology sizes 1x1: tp 1 divides; forced 2x4 is the user's and named so
    with pytest.raises(UserError, match=r"^vllm.topology: '2x4' gives tensor parallelism 8"):
        plan_vllm(
            VllmSpec(model="Qwen/Qwen2.5-1.5B-Instruct", topology="2x4", source_ranges=CLIENTS), CLUSTER, False, False
        )


def test_registry_modes_check_their_images():
    with pytest.raises(UserError, match=r"^vllm.registry.image: '<missing>' is required with mode standard"):
        plan(registry={"mode": "standard"})
    with pytest.raises(UserError, match=r"^vllm.image: 'us-docker.pkg.dev/x/y/vllm:1' is not on Docker Hub"):
        plan(registry={"mode": "remote"}, image="us-docker.pkg.dev/x/y/vllm:1")


@pytest.mark.parametrize(
    ("extra", "index", "written"),
    [
        (["--tensor-parallel-size", "4"], 0, "--tensor-parallel-size 4"),
        (["--tensor-parallel-size=4"], 0, "--tensor-parallel-size=4"),
        (["--enable-prefix-caching", "-tp", "4"], 1, "-tp 4"),  # vLLM's short form (engine/arg_utils.py)
        (["--tensor_parallel_size=4"], 0, "--tensor_parallel_size=4"),  # FlexibleArgumentParser reads _ as -
    ],
)
def test_a_tensor_parallel_size_in_extra_args_that_contradicts_the_slice_is_refused(extra, index, written):
    """The 70B model is sized onto a v6e 2x4 (8 chips): vLLM must shard over all 8. The policy pack
    catches this on the container's arguments; the program refuses it first, with the same rule."""
    with pytest.raises(UserError) as refused:
        plan(extra_args=extra)
    assert str(refused.value) == (
        f"vllm.extraArgs[{index}]: '{written}' sets tensor parallelism 4, but the v6e 2x4 slice the model is "
        "sized for has 8 devices; set it to 8, or leave it out (the stack sets --tensor-parallel-size=8)"
    )


@pytest.mark.parametrize(
    "extra", [["--tensor-parallel-size", "8"], ["-tp=8"], ["-tp", "4", "-pp", "2"], ["--tensor-parallel-size=8"]]
)
def test_a_tensor_parallel_size_that_matches_the_slice_passes_and_is_the_only_one(extra):
    args = plan(extra_args=extra).engine_args()
    assert not [a for a in args if a.startswith("--tensor-parallel-size=") and a not in extra]  # ours gives way
    assert args[-len(extra) :] == extra


def test_pipeline_parallel_alone_would_overcommit_the_slice():
    with pytest.raises(
        UserError,
        match=r"^vllm.extraArgs\[0\]: '-pp 2' with the stack's --tensor-parallel-size=8 "
        r"asks for 16 devices.*add --tensor-parallel-size=4 with it",
    ):
        plan(extra_args=["-pp", "2"])


def test_the_last_pipeline_flag_counts_as_in_argparse():
    """`-pp 1 -tp 4 -pp 2`: vLLM keeps the last -pp (2), so -tp 4 uses all 8 devices."""
    assert plan(extra_args=["-pp", "1", "-tp", "4", "-pp", "2"]).engine_args()[-6:] == [
        "-pp",
        "1",
        "-tp",
        "4",
        "-pp",
        "2",
    ]
    with pytest.raises(UserError, match=r"^vllm.extraArgs\[2\]: '-tp 8' sets tensor parallelism 8"):
        plan(extra_args=["-pp", "2", "-tp", "8"])


def test_pipeline_stages_that_do_not_divide_the_slice_are_refused():
    with pytest.raises(UserError) as refused:
        plan(extra_args=["-pp", "3", "-tp", "8"])
    assert str(refused.value) == (
        "vllm.extraArgs[0]: '-pp 3' asks for 3 pipeline stages, which do not divide the 8 devices of the v6e 2x4 "
        "slice the model is sized for; use a pipeline-parallel size that divides 8"
    )
    with pytest.raises(UserError, match=r"'-pp 0' asks for 0 pipeline stages"):
        plan(extra_args=["-pp", "0"])


@pytest.mark.parametrize(
    "extra, index, written, problem",
    [
        (
            ["--enforce-eager", "--max-model-len=131072"],
            1,
            "--max-model-len=131072",
            "sets --max-model-len, which the stack writes from vllm.maxModelLen (4096): the slice, its memory and its "
            "traffic were sized for the key's; set vllm.maxModelLen instead",
        ),
        (
            ["--max_num_seqs", "512"],
            0,
            "--max_num_seqs 512",
            "sets --max-num-seqs, which the stack writes from vllm.maxNumSeqs (128): the slice, its memory and its "
            "traffic were sized for the key's; set vllm.maxNumSeqs instead",
        ),
        (
            ["--port=9000"],
            0,
            "--port=9000",
            "sets --port, which the stack fixes at 8000 (the probes, the Service, the network policy and the "
            "metrics scrape use it); leave it out",
        ),
    ],
)
def test_extra_args_that_would_replace_a_flag_the_stack_writes_are_refused(extra, index, written, problem):
    """vLLM's argparse keeps a flag's last value, and extraArgs come last: the server would run what the plan did
    not size (serving/engine_flags.py)."""
    with pytest.raises(UserError) as refused:
        plan(extra_args=extra)
    assert str(refused.value) == f"vllm.extraArgs[{index}]: '{written}' {problem}"


def test_extra_args_that_repeat_the_stacks_values_pass():
    decided = plan(extra_args=["--max-model-len", "4096", "--max_num_seqs=128", "--port=8000"])
    assert decided.engine_args()[-4:] == ["--max-model-len", "4096", "--max_num_seqs=128", "--port=8000"]


def test_the_dtypes_extra_args_give_are_the_ones_the_slice_is_sized_in():
    """An fp8 KV cache halves the KV bytes a token needs; fp32 weights double the weights: the memory the slice
    is checked for is the server's, not `--dtype auto`'s."""
    plain, fp8_kv = plan(), plan(extra_args=["--kv-cache-dtype=fp8"])
    assert (plain.request.weight_dtype, plain.request.kv_dtype) == ("bf16", "bf16")
    assert (fp8_kv.request.weight_dtype, fp8_kv.request.kv_dtype) == ("bf16", "fp8")
    assert fp8_kv.verdict.memory.part("kv_cache") * 2 == pytest.approx(plain.verdict.memory.part("kv_cache"))
    fp32 = plan(model="meta-llama/Llama-3.1-8B", extra_args=["--dtype", "float32"])
    assert fp32.request.weight_dtype == "fp32"
    assert fp32.verdict.memory.part("weights") == pytest.approx(
        2 * plan(model="meta-llama/Llama-3.1-8B").verdict.memory.part("weights")
    )
    with pytest.raises(UserError, match=r"^vllm.extraArgs\[0\]: '-q awq' --quantization awq is not one"):
        plan(extra_args=["-q", "awq"])
    with pytest.raises(UserError, match=r"^vllm.extraArgs\[1\]: '-qawq' --quantization awq is not one"):
        plan(extra_args=["--enforce-eager", "-qawq"])  # argparse's attached short form


def test_a_flag_and_its_value_in_one_entry_are_refused():
    """Kubernetes passes container arguments without a shell, and argparse takes an argument holding a space for a
    positional: `--tensor-parallel-size 4` in one YAML item would never reach vLLM as a flag."""
    with pytest.raises(UserError) as refused:
        plan(extra_args=["--enforce-eager", "--kv-cache-dtype fp8"])
    assert str(refused.value) == (
        "vllm.extraArgs[1]: '--kv-cache-dtype fp8' is a flag and its value in one argument, which the server takes "
        "for a positional (no shell splits it); write --kv-cache-dtype=fp8, or the flag and its value as two entries"
    )
    assert plan(extra_args=["--served-model-name=my model"]).engine_args()[-1] == "--served-model-name=my model"


WRITES = [a.split("=")[0] for a in plan().engine_args() if not a.startswith("--tensor-parallel-size")]


@pytest.mark.parametrize("flag", WRITES)
def test_every_flag_the_stack_writes_is_refused_with_another_value(flag):
    """Each flag `engine_args` writes (read from the arguments, not from `written_flags`), named by the key that
    sets it or as fixed by the stack."""
    written = written_flags(VllmSpec(model="meta-llama/Llama-3.1-70B"), "meta-llama/Llama-3.1-70B")[flag]
    with pytest.raises(UserError) as refused:
        plan(extra_args=[f"{flag}=12345"])
    assert str(refused.value).startswith(f"vllm.extraArgs[0]: '{flag}=12345' sets {flag}, which the stack")
    assert (written.key or "fixes at") in str(refused.value)


def test_an_abbreviated_flag_is_the_flag_argparse_takes_it_for():
    """vLLM's parser keeps argparse's abbreviations (ledger: vllm.args.abbreviations): `--max-model` is
    `--max-model-len`, `--dty` is `--dtype`."""
    with pytest.raises(UserError, match="vllm.maxModelLen"):
        plan(extra_args=["--max-model=131072"])
    assert plan(model="meta-llama/Llama-3.1-8B", extra_args=["--dty", "float32"]).request.weight_dtype == "fp32"


def test_a_settings_file_is_refused():
    """`--config FILE` would set flags from a file the plan cannot read (ledger: vllm.args.config-file)."""
    with pytest.raises(UserError) as refused:
        plan(extra_args=["--config", "/etc/vllm.yaml"])
    assert str(refused.value).startswith("vllm.extraArgs[0]: '--config /etc/vllm.yaml' names a settings file")


def test_the_slo_s_batch_cap_cannot_be_undone_by_extra_args():
    """A latency limit sets maxNumSeqs (vllm/plan.py _with_slo) after the first check: an extraArgs `--max-num-seqs`
    equal to the key's default would otherwise come last and replace the slo's cap."""
    slo = {"output_tokens_per_second": 1000, "ntpot_ms": 20}
    decided = plan(model="meta-llama/Llama-3.1-8B", slo=slo)
    assert decided.spec.max_num_seqs < 128
    with pytest.raises(UserError) as refused:
        plan(model="meta-llama/Llama-3.1-8B", slo=slo, extra_args=["--max-num-seqs=128"])
    assert f"vllm.maxNumSeqs ({decided.spec.max_num_seqs})" in str(refused.value)


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["--tensor-parallel=2"], "'--tensor-parallel=2' sets tensor parallelism 2"),
        (["--pipeline-parallel", "3"], "'--pipeline-parallel 3' asks for 3 pipeline stages"),
        (["--pipeline-parallel=2"], "'--pipeline-parallel=2' with the stack's --tensor-parallel-size=8"),
    ],
)
def test_an_abbreviated_parallel_flag_is_read_as_vllm_reads_it(args, shown):
    """argparse takes `--tensor-parallel` for `--tensor-parallel-size` (ledger: vllm.args.abbreviations): checked
    against the slice like the full name, shown as written."""
    with pytest.raises(UserError) as refused:
        plan(extra_args=args)
    assert str(refused.value).startswith(f"vllm.extraArgs[0]: {shown}")
