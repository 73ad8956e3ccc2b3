"""Multi-host serving on KubeRay, judged on raw programs (no project components, no tpu-stacks.dev annotations).

A RayService's TPU worker group must form the slice its node selectors name (hosts x chips per host:
tpu-workload-matches-pool, the check every kind gets), its Serve config must shard over that slice's
devices and ask Ray for that slice (tpu-workload-matches-pool, read from serveConfigV2), and the slice must
hold the model the Serve config names at its max_model_len (tpu-model-fits-slice; an uncatalogued model is
the advisory tpu-model-sizable). The Serve config is Ray Serve LLM's OpenAI app
([RAY-SERVE-TPU]).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from tests.policies import objects as o
from tests.policies.harness import UNKNOWN_STRING, capture, of, raw, run
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.objects.annotations import for_serving
from tpu_stacks.sizing import ServingRequest

FIT, SIZABLE, MATCH = "tpu-model-fits-slice", "tpu-model-sizable", "tpu-workload-matches-pool"
V6E, V5P = "tpu-v6e-slice", "tpu-v5p-slice"
IMAGE = "us-docker.pkg.dev/my-project/serving/ray-vllm-tpu:2.60.0"
LLAMA_405B = "meta-llama/Llama-3.1-405B-Instruct"
GROUP = "worker group tpu-group (spec.rayClusterConfig.workerGroupSpecs[0])"


def llm_config(
    tp: int | None = 32, topology: str | None = "4x8", model: str = LLAMA_405B, **engine: Any
) -> dict[str, Any]:
    """One LLMConfig as the shared shape of the multi-host mode writes it."""
    engine_kwargs: dict[str, Any] = {"max_model_len": 8192, "distributed_executor_backend": "ray", **engine}
    if tp is not None:
        engine_kwargs["tensor_parallel_size"] = tp
    config: dict[str, Any] = {
        "model_loading_config": {"model_id": model, "model_source": model},
        "accelerator_type": "TPU-V6E",
        "engine_kwargs": engine_kwargs,
        "deployment_config": {"autoscaling_config": {"min_replicas": 1, "max_replicas": 2}},
    }
    if topology is not None:
        config["accelerator_config"] = {"kind": "tpu", "topology": topology}
    return config


def serve(*configs: dict[str, Any], args: dict[str, Any] | None = None) -> str:
    application = {
        "name": "llm",
        "route_prefix": "/",
        "import_path": "ray.serve.llm:build_openai_app",
        "args": args if args is not None else {"llm_configs": list(configs)},
    }
    return yaml.safe_dump({"applications": [application]})


def service(config: str, topology: str = "4x8", hosts: int = 8, chips: int = 4, accelerator: str = V6E, notes=None):
    worker = o.pod(accelerator, topology, chips, image=IMAGE, command=["/bin/bash", "-lc", "ray start"])
    return lambda: o.rayservice("llama-405b", worker, hosts, config, notes)


def verdicts(build) -> dict[str, list[str]]:
    diagnostics = run(capture(build))
    assert not [d for d in diagnostics if "can't run policy" in d.message]
    return {policy: [d.message for d in of(diagnostics, policy)] for policy in (FIT, SIZABLE, MATCH)}


CLEAN = {FIT: [], SIZABLE: [], MATCH: []}


def test_405b_on_v6e_4x8_with_tensor_parallel_32_passes():
    """The catalogue's slice for 405B in bf16 (`tpu-stacks size`: v6e 4x8, 8 hosts x 4 chips): no finding."""
    assert verdicts(service(serve(llm_config()))) == CLEAN


# (a) hosts x chips per host is the slice: the matching rule, for a RayService as for any workload


def test_a_worker_group_with_too_few_hosts_for_its_slice_is_refused():
    found = verdicts(service(serve(llm_config()), hosts=4))
    (message,) = found[MATCH]
    assert message == (
        "RayService serving/llama-405b: spec.rayClusterConfig.workerGroupSpecs[0].template runs 4 pod(s) per slice "
        "but tpu-v6e-slice 4x8 with 4 chips per node is 8 hosts; set numOfHosts to 8"
    )


def test_a_worker_group_asking_more_chips_than_a_host_has_is_refused():
    (message,) = verdicts(service(serve(llm_config()), hosts=4, chips=8))[MATCH]
    assert "requests 8 google.com/tpu per pod but tpu-v6e-slice 4x8 nodes have 4 chips" in message
    assert "request 4 per pod and run 8 pod(s) per slice" in message


def test_a_hand_written_raycluster_gets_the_same_hosts_check():
    """No Serve config at all: a RayCluster (the GKE Ray tutorials' kind) whose group is half its slice."""
    worker = o.pod(V6E, "4x4", 4, image="rayproject/ray:2.60.0-py312-tpu")
    (message,) = verdicts(lambda: o.raycluster("ray-tpu", worker, 2))[MATCH]
    assert message.startswith("RayCluster ray-tpu: spec.workerGroupSpecs[0].template runs 2 pod(s) per slice")
    assert message.endswith("is 4 hosts; set numOfHosts to 4")
    assert verdicts(lambda: o.raycluster("ray-tpu", worker, 4)) == CLEAN


# (b) tensor x pipeline parallel uses the slice's devices, and the slice Ray is asked for is the group's


def test_tensor_parallel_below_the_slice_is_refused_with_the_value_that_uses_it():
    found = verdicts(service(serve(llm_config(tp=16))))
    (message,) = found[MATCH]
    assert message == (
        "RayService serving/llama-405b: serveConfigV2 applications[0].args.llm_configs[0].engine_kwargs."
        f"tensor_parallel_size is 16 but {GROUP} forms v6e 4x8: 8 hosts x 4 chips = 32 devices per replica; "
        "set it to 32"
    )


def test_tensor_parallel_left_unset_is_vllms_one_device():
    (message,) = verdicts(service(serve(llm_config(tp=None))))[MATCH]
    assert "tensor_parallel_size is not set (vLLM's default 1)" in message and message.endswith("set it to 32")


def test_tensor_times_pipeline_parallel_may_cover_the_slice():
    assert verdicts(service(serve(llm_config(tp=16, pipeline_parallel_size=2)))) == CLEAN
    (message,) = verdicts(service(serve(llm_config(tp=8, pipeline_parallel_size=2))))[MATCH]
    assert "tensor_parallel_size is 8" in message and message.endswith("set it to 16 (with pipeline_parallel_size 2)")
    (message,) = verdicts(service(serve(llm_config(tp=8, pipeline_parallel_size=3))))[MATCH]
    assert "pipeline_parallel_size is 3" in message and "use a pipeline-parallel size that divides 32" in message


def test_vllm_command_line_arguments_of_an_application_are_read_too():
    """An application of its own code passing vLLM's flags (no llm_configs): the same rule on the flags."""
    config = serve(args={"model": LLAMA_405B, "engine_args": ["--tensor-parallel-size=8", "--max-model-len=8192"]})
    (message,) = verdicts(service(config))[MATCH]
    assert message == (
        "RayService serving/llama-405b: serveConfigV2 applications[0].args passes --tensor-parallel-size=8 but "
        f"{GROUP} forms v6e 4x8 = 32 devices per replica; set it to 32"
    )
    spaced = serve(args={"model": LLAMA_405B, "engine_args": ["--tensor-parallel-size", "16"]})
    (message,) = verdicts(service(spaced))[MATCH]
    assert "passes --tensor-parallel-size 16 but" in message
    good = serve(args={"model": LLAMA_405B, "engine_args": ["--tensor-parallel-size", "32"]})
    assert verdicts(service(good))[MATCH] == []


def test_a_topology_no_worker_group_forms_is_refused():
    found = verdicts(service(serve(llm_config(topology="4x4", tp=16))))
    (message,) = found[MATCH]
    assert message.startswith(
        "RayService serving/llama-405b: serveConfigV2 applications[0].args.llm_configs[0] asks for accelerator_type "
        "TPU-V6E, accelerator_config.topology 4x4 but no TPU worker group provides it"
    )
    assert f"({GROUP} selects tpu-v6e-slice 4x8)" in message
    assert found[FIT] == []  # the config is placed on no group: nothing to size it against


def test_an_accelerator_type_of_another_generation_is_refused():
    config = llm_config()
    config["accelerator_type"] = "TPU-V5P"
    (message,) = verdicts(service(serve(config)))[MATCH]
    assert "asks for accelerator_type TPU-V5P, accelerator_config.topology 4x8 but no TPU worker group" in message


# (c) the slice holds the model the Serve config names, at its max_model_len


def test_405b_on_a_slice_too_small_is_refused_from_the_serve_config():
    found = verdicts(service(serve(llm_config(tp=16, topology="4x4")), topology="4x4", hosts=4))
    assert found[MATCH] == [] and found[SIZABLE] == []
    (message,) = found[FIT]
    assert message.startswith(f"RayService serving/llama-405b: {LLAMA_405B} needs ")
    assert "read from its serveConfigV2 applications[0].args.llm_configs[0], no tpu-stacks.dev annotations" in message
    assert "gets 16 v6e chips on 4x4 (4 pods x 4 google.com/tpu, sharded over tensor_parallel_size=16)" in message
    assert "use v6e 4x8" in message


def test_max_model_len_is_read_from_engine_kwargs():
    (message,) = verdicts(service(serve(llm_config(max_model_len=131072))))[FIT]
    assert "kv_cache" in message and "gets 32 v6e chips on 4x8" in message


def test_the_model_is_found_under_model_source_or_the_path_the_weights_are_mounted_at():
    config = llm_config()
    config["model_loading_config"] = {"model_id": "llama-405b", "model_source": f"/data/{LLAMA_405B}"}
    assert verdicts(service(serve(config))) == CLEAN
    small = copy.deepcopy(config)
    small["accelerator_config"]["topology"] = "4x4"
    small["engine_kwargs"]["tensor_parallel_size"] = 16
    (message,) = verdicts(service(serve(small), topology="4x4", hosts=4))[FIT]
    assert "needs" in message and "4x4" in message


def test_a_model_the_catalogue_does_not_know_is_an_advisory_not_a_guess():
    found = verdicts(service(serve(llm_config(model="acme/unheard-of-400b"))))
    assert found[FIT] == [] and found[MATCH] == []
    (advisory,) = found[SIZABLE]
    assert (
        "applications[0].args.llm_configs[0].model_loading_config.model_source: 'acme/unheard-of-400b' is not in "
        in (advisory)
    )
    assert advisory.endswith("the model's fit is not checked")


def test_a_serve_config_that_is_not_yaml_is_an_advisory_and_stops_nothing_else():
    found = verdicts(service("applications: [\n", hosts=4))
    (advisory,) = found[SIZABLE]
    assert "its serveConfigV2 is not YAML" in advisory
    assert found[FIT] == [] and len(found[MATCH]) == 1  # the hosts check still runs


def _notes(context: int, model: str = LLAMA_405B) -> dict[str, str]:
    return for_serving(ServingRequest(model=lookup_model(model), engine="vllm", context=context), 32)


def test_the_serve_config_wins_over_annotations():
    """The Serve config is what runs: annotations that say a small context (or a small model) do not pass a
    Serve config whose engine_kwargs.max_model_len the slice cannot hold, and annotations that say too much do
    not refuse a Serve config that fits."""
    for notes in (_notes(4096), _notes(4096, "meta-llama/Llama-3.1-8B")):
        (message,) = verdicts(service(serve(llm_config(max_model_len=131072)), notes=notes))[FIT]
        assert message.startswith(f"RayService serving/llama-405b: {LLAMA_405B} needs ")
        assert "read from its serveConfigV2 applications[0].args.llm_configs[0]" in message
    assert verdicts(service(serve(llm_config(max_model_len=4096)), notes=_notes(131072)))[FIT] == []


def test_annotations_are_judged_while_the_serve_config_is_unknown():
    """At preview a computed Serve config is unknown: the annotations still say what was sized."""
    spec = {"serveConfigV2": UNKNOWN_STRING, "rayClusterConfig": o.ray_cluster_spec(o.pod(V6E, "4x8", 4), 8)}
    metadata = {"name": "s", "annotations": _notes(131072)}
    props = {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": metadata, "spec": spec}
    (message,) = [d.message for d in of(run([raw("kubernetes:ray.io/v1:RayService", "s", props)]), FIT)]
    assert f"{LLAMA_405B} needs " in message
    metadata["annotations"] = _notes(4096)
    assert not of(run([raw("kubernetes:ray.io/v1:RayService", "s", props)]), FIT)


def test_a_serve_config_unknown_at_preview_is_skipped():
    spec = {"serveConfigV2": UNKNOWN_STRING, "rayClusterConfig": o.ray_cluster_spec(o.pod(V6E, "4x8", 4), 8)}
    props = {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s"}, "spec": spec}
    diagnostics = run([raw("kubernetes:ray.io/v1:RayService", "s", props)])
    assert not [d for d in diagnostics if d.policy in (FIT, SIZABLE, MATCH) or "can't run policy" in d.message]


def test_a_v5p_service_is_judged_with_its_own_generation():
    config = llm_config(tp=8, topology="2x2x2")
    config["accelerator_type"] = "TPU-V5P"
    assert verdicts(service(serve(config), topology="2x2x2", hosts=2, accelerator=V5P))[MATCH] == []


@pytest.mark.parametrize(("accelerator", "topology"), [(V6E, UNKNOWN_STRING), (UNKNOWN_STRING, "4x8")])
def test_a_worker_group_whose_slice_is_unknown_at_preview_is_not_refused(accelerator: str, topology: str):
    """A selector computed by the program (unknown at preview): Ray's placement cannot be judged yet."""
    worker = o.pod(accelerator, topology, 4)
    spec = {"serveConfigV2": serve(llm_config(tp=16)), "rayClusterConfig": o.ray_cluster_spec(worker, 8)}
    props = {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s"}, "spec": spec}
    diagnostics = run([raw("kubernetes:ray.io/v1:RayService", "s", props)])
    assert not [d for d in diagnostics if d.policy in (FIT, MATCH) or "can't run policy" in d.message]


def test_settings_the_memory_model_cannot_size_are_advisories():
    nameless = llm_config()
    nameless["model_loading_config"] = {}
    (advisory,) = verdicts(service(serve(nameless)))[SIZABLE]
    assert "applications[0].args.llm_configs[0] names no model_loading_config.model_id" in advisory
    (advisory,) = verdicts(service(serve(llm_config(max_model_len="long"))))[SIZABLE]
    assert "--max-model-len: 'long' is not a number" in advisory
    (advisory,) = verdicts(service(serve(llm_config(max_model_len=0))))[SIZABLE]
    assert "its engine_kwargs are not a valid sizing input" in advisory and "\n" not in advisory


def test_an_unset_tensor_parallel_size_shards_the_model_over_one_device():
    (message,) = verdicts(service(serve(llm_config(tp=None))))[FIT]
    assert "gets 1 v6e chips on 4x8" in message


def test_the_fit_message_names_tensor_and_pipeline_parallel_when_both_shard():
    config = llm_config(tp=8, topology="4x4", pipeline_parallel_size=2)
    (message,) = verdicts(service(serve(config), topology="4x4", hosts=4))[FIT]
    assert "sharded over tensor_parallel_size x pipeline_parallel_size=16" in message


def test_a_pipeline_flag_that_does_not_divide_the_slice_is_named():
    config = serve(args={"model": LLAMA_405B, "engine_args": ["--pipeline-parallel-size=3"]})
    (message,) = verdicts(service(config))[MATCH]
    assert "passes --pipeline-parallel-size=3 but" in message
    assert message.endswith("use a pipeline-parallel size that divides 32")


def test_a_slice_no_group_forms_is_said_once_naming_every_group():
    cluster = o.ray_cluster_spec(o.pod(V6E, "4x8", 4, image=IMAGE), 8)
    second = copy.deepcopy(cluster["workerGroupSpecs"][0])
    second.update(groupName="small", numOfHosts=4)
    second["template"]["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "4x4"
    cluster["workerGroupSpecs"].append(second)
    spec = {"serveConfigV2": serve(llm_config(topology="2x4", tp=8)), "rayClusterConfig": cluster}
    props = {"apiVersion": "ray.io/v1", "kind": "RayService", "metadata": {"name": "s"}, "spec": spec}
    (message,) = [d.message for d in of(run([raw("kubernetes:ray.io/v1:RayService", "s", props)]), MATCH)]
    assert "accelerator_config.topology 2x4 but no TPU worker group provides it" in message
    assert "worker group tpu-group (spec.rayClusterConfig.workerGroupSpecs[0]) selects tpu-v6e-slice 4x8" in message
    assert "worker group small (spec.rayClusterConfig.workerGroupSpecs[1]) selects tpu-v6e-slice 4x4" in message


def test_with_a_pipeline_flag_that_fits_the_tensor_flag_is_the_one_named():
    config = serve(
        args={"model": LLAMA_405B, "engine_args": ["--pipeline-parallel-size=2", "--tensor-parallel-size=8"]}
    )
    (message,) = verdicts(service(config))[MATCH]
    assert "passes --tensor-parallel-size=8 but" in message and message.endswith(
        "set it to 16 (with pipeline parallel 2)"
    )


@pytest.mark.parametrize(
    ("model_id", "source"),
    [
        (LLAMA_405B, f"/data/{LLAMA_405B}"),  # ours: the download Job's folder on the mount
        ("llama-405b", f"/data/{LLAMA_405B}"),  # a client-facing name: the path's last two parts name the model
        ("llama-405b", f"gs://weights-bucket/models/{LLAMA_405B}"),  # a mirror's bucket_uri
    ],
)
def test_a_model_loaded_from_a_path_is_still_sized(model_id: str, source: str):
    config = llm_config(max_model_len=4096)
    config["model_loading_config"] = {"model_id": model_id, "model_source": source}
    assert verdicts(service(serve(config))) == CLEAN
    config["engine_kwargs"]["max_model_len"] = 131072
    found = verdicts(service(serve(config)))
    (message,) = found[FIT]
    assert "meta-llama/Llama-3.1-405B" in message and " needs " in message and found[SIZABLE] == []
