"""The weights on a multi-host slice: every TPU host reads the whole checkpoint (tpu-inference under
TPU_MULTIHOST_BACKEND=ray keeps only its own shards), once per start, one file at a time. So the hosts mount the
bucket without a file cache (it would hold the checkpoint again in each host's memory and serve no second read) and
with an uncapped GCS FUSE sidecar (a CPU limit throttles the one reading stream), as GKE's multi-host sample does;
and no Ray pod holds the Hugging Face token: they load from the bucket, the download Job alone downloads."""

import math
from pathlib import Path

import yaml

from tests.vllm.test_multihost import ONE_SLICE, plan, ray_service, stack
from tpu_stacks.vllm.download_plan import READ_BYTES_PER_S, load_minutes
from tpu_stacks.vllm.weights_download import weights_bytes

ROOT = Path(__file__).resolve().parents[2]


def templates(mocks):
    cluster = ray_service(mocks)["spec"]["rayClusterConfig"]
    return cluster["headGroupSpec"]["template"], cluster["workerGroupSpecs"][0]["template"]


def test_no_file_cache_on_a_multi_host_slice_and_one_on_a_single_host():
    assert plan(replicas=ONE_SLICE).cache_gib == 0
    assert plan(model="meta-llama/Llama-3.1-70B").cache_gib > 0  # one host reads its weights through the cache


def test_the_tpu_hosts_read_through_an_uncached_mount_and_an_uncapped_sidecar():
    head, worker = templates(stack(replicas=ONE_SLICE))
    for template in (head, worker):
        pod = template["spec"]
        (weights,) = [v for v in pod["volumes"] if v["name"] == "weights"]
        assert "file-cache" not in weights["csi"]["volumeAttributes"]["mountOptions"]
        assert "gke-gcsfuse-cache" not in {v["name"] for v in pod["volumes"]}
    notes = worker["metadata"]["annotations"]
    assert (notes["gke-gcsfuse/cpu-limit"], notes["gke-gcsfuse/memory-limit"]) == ("0", "0")


def test_no_ray_pod_holds_the_hugging_face_token():
    for template in templates(stack(replicas=ONE_SLICE)):
        pod = template["spec"]
        assert "hf-token" not in {v["name"] for v in pod["volumes"]}
        (container,) = pod["containers"]
        assert "HF_TOKEN_PATH" not in {e["name"] for e in container.get("env", [])}


def test_the_shipped_405b_budget_covers_every_host_reading_the_checkpoint():
    """vllm.startupMinutes covers the assumed single-stream read of the whole checkpoint on each host (the docs
    state the same figure: the bytes read are hosts x weights)."""
    config = yaml.safe_load((ROOT / "Pulumi.vllm-405b.yaml").read_text())["config"]["tpu-stacks:vllm"]
    decided = plan(replicas=ONE_SLICE)
    weights = weights_bytes(decided)
    assert load_minutes(weights) == math.ceil(weights / READ_BYTES_PER_S / 60)
    assert load_minutes(weights) < config["startupMinutes"]
    total = f"{decided.parallelism.hosts * weights / 1e9:,.1f} GB"
    for doc in ("docs/vllm.md", "docs/first-deploy.md"):
        text = (ROOT / doc).read_text()
        assert total in text and f"{load_minutes(weights)} minutes" in text, doc
