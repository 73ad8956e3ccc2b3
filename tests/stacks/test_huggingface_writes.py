"""Where the Hugging Face client writes in each pod that downloads from the Hub, judged against the
volumes the pod really mounts: no cache may land on a volume too small for it (an emptyDir over its
sizeLimit gets the pod evicted).

The model of the client is written from its documentation and source, not from our code:
- `HF_HOME` defaults to `$HOME/.cache/huggingface`; the hub cache (`HF_HUB_CACHE`) to `$HF_HOME/hub`,
  Xet's cache (`HF_XET_CACHE`) to `$HF_HOME/xet` (huggingface_hub docs/source/en/package_reference/
  environment_variables.md; huggingface/xet-core data/src/data_client.rs reads the same variables);
- Xet's chunk cache holds up to `HF_XET_CHUNK_CACHE_SIZE_BYTES`, 10 GiB when unset in hf-xet 1.1.3 (the
  oldest the SGLang image's huggingface_hub 0.34.3 admits; xet-core v1.1.3); hf-xet 1.5.2 (the vLLM images') keeps
  none, but a pod is judged at the larger default, so a later release that brings the cache back still fits;
- a download with `local_dir` still goes through a temporary file in the hub cache in huggingface_hub
  before 0.23.0 (file_download.py at v0.22.2), so the hub cache must sit on the volume sized for the
  download; vLLM hands its `--download-dir` to the client as the cache itself. From 0.23.0 a `local_dir`
  download keeps its temporary files and metadata in `<local_dir>/.cache/huggingface` (file_download.py
  `_download_to_tmp_and_move`, huggingface_hub 1.28.0, the vLLM image's), so the multi-host stack's download Job, which runs
  vLLM's own client (transformers 5.x, huggingface_hub 1.x), writes into its `local_dir` only.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.jetstream.test_component import GEMMA, build, pod
from tests.stacks.test_security import pods
from tests.stacks.test_shipped_stacks import WORKLOAD_STACKS

GiB = 1024**3
XET_DEFAULT = 10 * GiB
RAY_HOME = "/home/ray"  # rayproject/ray images: USER ray, HOME /home/ray


def _arg(container: dict[str, Any], flag: str) -> str | None:
    return next((a.split("=", 1)[1] for a in container.get("args") or [] if a.startswith(f"{flag}=")), None)


def download_target(container: dict[str, Any]) -> tuple[bool, str | None]:
    """(downloads from Hugging Face, the directory sized for the download or None)."""
    if "vllm.entrypoints.openai.api_server" in (container.get("command") or []):
        return True, _arg(container, "--download-dir")
    if "sgl_jax.launch_server" in (container.get("command") or []):
        return True, _arg(container, "--download-dir")  # snapshot_download(cache_dir=--download-dir), sglang-jax
    if _arg(container, "--model_id"):  # `jpt serve`
        return True, _arg(container, "--working_dir")
    if "inference-checkpoint" in container["image"] and "-h=True" in (container.get("args") or []):
        return True, "/base"  # checkpoint_converter.sh: huggingface-cli download --local-dir /base/
    command = container.get("command") or []
    if command[:2] == ["python3", "-c"] and "snapshot_download(" in command[2]:
        return True, command[4]  # the multi-host download Job: snapshot_download(local_dir=sys.argv[2])
    if container["name"] in ("ray-head", "ray-worker"):
        return True, None  # MaxText's tokenizers and `hf` datasets
    return False, None


def _gib(quantity: str) -> float:
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    return float(quantity[:-2]) * units[quantity[-2:]] if quantity[-2:] in units else float(quantity)


def volume_at(template: dict[str, Any], container: dict[str, Any], path: str) -> tuple[str, float]:
    """(volume name, capacity in bytes; inf for a bucket) of the mount that holds `path`."""
    mounts = [m for m in container.get("volumeMounts") or [] if path.rstrip("/").startswith(m["mountPath"])]
    assert mounts, f"{container['name']}: {path} is on the read-only root filesystem"
    mount = max(mounts, key=lambda m: len(m["mountPath"]))
    volume = next(v for v in template["spec"]["volumes"] if v["name"] == mount["name"])
    if "emptyDir" in volume:
        return volume["name"], _gib(volume["emptyDir"]["sizeLimit"])
    if "ephemeral" in volume:
        request = volume["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"]
        return volume["name"], _gib(request)
    return volume["name"], float("inf")  # GCS FUSE: the bucket


def problems(template: dict[str, Any]) -> list[str]:
    found = []
    for container in [*template["spec"].get("initContainers", []), *template["spec"]["containers"]]:
        downloads, target = download_target(container)
        if not downloads:
            continue
        env = {e["name"]: e.get("value") for e in container.get("env") or []}
        home = env.get("HOME") or (RAY_HOME if container["name"].startswith("ray-") else None)
        assert home, f"{container['name']}: no HOME"
        hf_home = env.get("HF_HOME", f"{home}/.cache/huggingface")
        xet = env.get("HF_XET_CACHE", f"{hf_home}/xet")
        chunk = int(env.get("HF_XET_CHUNK_CACHE_SIZE_BYTES", XET_DEFAULT))
        name, capacity = volume_at(template, container, xet)
        if chunk > capacity / 2:
            found.append(
                f"{container['name']}: a {chunk / GiB:.0f} GiB Xet chunk cache on volume {name} ({capacity / GiB:.0f} GiB)"
            )
        hub = env.get("HF_HUB_CACHE", f"{hf_home}/hub")
        command = container.get("command") or []
        if "vllm.entrypoints.openai.api_server" in command or "sgl_jax.launch_server" in command:
            # both hand --download-dir to snapshot_download as its cache_dir (vLLM; ledger: sglang.flag.download-dir);
            # without it the weights go to the hub cache
            target = target or hub
        elif (container.get("command") or [])[:2] == ["python3", "-c"]:
            pass  # a local_dir download of huggingface_hub >= 0.23 writes nothing to the hub cache (above)
        elif target and volume_at(template, container, hub)[0] != volume_at(template, container, target)[0]:
            found.append(f"{container['name']}: the hub cache {hub} is not on the volume of {target}")
        if target:
            name, capacity = volume_at(template, container, target)
            if capacity <= 2 * GiB:
                found.append(
                    f"{container['name']}: downloads into {target}, on the {name} volume of {capacity / GiB:.0f} GiB"
                )
    return found


def downloading(stack: str) -> list[tuple[str, dict[str, Any]]]:
    return [(owner, t) for owner, _, t in pods(stack) if any(download_target(c)[0] for c in t["spec"]["containers"])]


@pytest.mark.parametrize("stack", WORKLOAD_STACKS)
def test_every_hugging_face_download_writes_where_there_is_room(stack):
    found = downloading(stack)
    if stack.startswith(("saxml",)):
        assert found == []  # Saxml reads its checkpoints from GCS only
        return
    assert found, f"{stack}: some pod downloads from Hugging Face"
    for owner, template in found:
        assert problems(template) == [], owner


def test_the_jetstream_download_flow_keeps_the_client_on_the_weights_volume():
    template = {"spec": pod(build(GEMMA, flow="download"))}
    assert problems(template) == []
    server = next(c for c in template["spec"]["containers"] if c["name"] == "jetstream-pytorch-server")
    assert {"name": "HF_HOME", "value": "/weights/.huggingface"} in server["env"]


def _without(template: dict[str, Any], variable: str) -> dict[str, Any]:
    changed = copy.deepcopy(template)
    for container in changed["spec"]["containers"]:
        container["env"] = [e for e in container.get("env") or [] if e["name"] != variable]
    return changed


def _with_small_home(template: dict[str, Any]) -> dict[str, Any]:
    """`template` with HOME on a 2 GiB emptyDir, as `harden` gives every pod by default."""
    changed = copy.deepcopy(template)
    changed["spec"]["volumes"].append({"name": "small-home", "emptyDir": {"sizeLimit": "2Gi"}})
    for container in changed["spec"]["containers"]:
        home = next(e["value"] for e in container["env"] if e["name"] == "HOME")
        mounts = [m for m in container["volumeMounts"] if m["mountPath"] != home]
        container["volumeMounts"] = [*mounts, {"name": "small-home", "mountPath": home}]
    return changed


@pytest.mark.parametrize(
    ("stack", "owner", "variable", "problem"),
    [
        (
            "vllm",
            "vllm-tpu",
            "HF_XET_CHUNK_CACHE_SIZE_BYTES",
            "vllm-tpu: a 10 GiB Xet chunk cache on volume home (2 GiB)",
        ),
        (
            "raytrain",
            "maxtext-tpu-cluster",
            "HF_XET_CHUNK_CACHE_SIZE_BYTES",
            "ray-head: a 10 GiB Xet chunk cache on volume cache (10 GiB)",
        ),
    ],
)
def test_the_check_sees_a_cache_on_the_small_home(stack, owner, variable, problem):
    template = next(t for name, t in downloading(stack) if name == owner)
    assert problem in problems(_without(template, variable))


def test_the_check_sees_the_converters_hub_cache_on_a_small_home():
    (template,) = [t for name, t in downloading("jetstream-gemma") if name.startswith("checkpoint-converter")]
    assert problems(_with_small_home(template)) == [
        "inference-checkpoint: the hub cache /home/app/.cache/huggingface/hub is not on the volume of /base"
    ]


def test_the_check_sees_vllm_weights_in_the_hub_cache_without_a_download_dir():
    (template,) = [t for _, t in downloading("vllm")]
    changed = copy.deepcopy(template)
    server = changed["spec"]["containers"][0]
    server["args"] = [a for a in server["args"] if not a.startswith("--download-dir=")]
    assert problems(changed) == [
        "vllm-tpu: downloads into /home/app/.cache/huggingface/hub, on the home volume of 2 GiB"
    ]


def test_the_multi_host_download_job_writes_into_the_bucket_and_the_check_sees_a_small_target():
    """The vllm-405b download Job: `local_dir` on the weights bucket passes; the same Job aimed at /tmp (a
    2 GiB emptyDir) is reported."""
    template = dict(downloading("vllm-405b"))["vllm-weights-download"]
    assert problems(template) == []
    small = copy.deepcopy(template)
    (container,) = small["spec"]["containers"]
    container["command"][4] = "/tmp/meta-llama/Llama-3.1-405B-Instruct"
    assert problems(small) == [
        "download: downloads into /tmp/meta-llama/Llama-3.1-405B-Instruct, on the tmp volume of 2 GiB"
    ]


def test_the_chunk_cache_variable_is_the_one_both_pinned_hf_xet_releases_read():
    """The vLLM images' hf-xet 1.5.2 names it in its config group; the SGLang image's 1.1.3 builds it from
    `HF_XET_` and the constant's name (`configurable_constants!`), and there it is what turns the 10 GiB cache off."""
    from tpu_stacks.catalog.upstream import text
    from tpu_stacks.k8s.huggingface import XET_CHUNK_CACHE_VARIABLE

    assert XET_CHUNK_CACHE_VARIABLE == "HF_XET_" + text("hf-xet-sglang.chunk-cache.variable")
