"""The multi-host server's first start survives the slice coming up: Ray Serve LLM's engine-start limit is the
stack's startup budget, and Serve retries the replica as long as the TPU hosts may take to appear (a node pool
scaled from zero, then the image), instead of failing the deployment for good after three 100 s reservations.
The TPU variables are where GKE's sample puts them: JAX's on the TPU workers, the executor's in the runtime_env."""

import math

import pytest
import yaml

from tests.vllm.test_multihost import ONE_SLICE, ray_service, serve, stack, workers
from tpu_stacks.catalog.upstream import fact, number
from tpu_stacks.objects.awaits import IMAGE_PULL_MINUTES, NODE_PROVISIONING_MINUTES
from tpu_stacks.vllm.multihost_plan import HOST_START_MINUTES


@pytest.fixture(scope="module")
def slices():
    return stack(replicas={"min": 1, "max": 2}, startup_minutes=150)


def llm_config(mocks):
    (llm,) = serve(mocks)["applications"][0]["args"]["llm_configs"]
    return llm


def env_of(container) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container.get("env", [])}


def head(mocks):
    (container,) = ray_service(mocks)["spec"]["rayClusterConfig"]["headGroupSpec"]["template"]["spec"]["containers"]
    return container


def worker(mocks):
    (container,) = workers(mocks)["template"]["spec"]["containers"]
    return container


def test_ray_serve_llm_waits_for_the_engine_as_long_as_the_startup_budget(slices):
    env = llm_config(slices)["runtime_env"]["env_vars"]
    # one budget drives both limits; Ray's own default (3600 s) is shorter than the stack's 150 minutes
    assert env["RAYLLM_ENGINE_START_TIMEOUT_S"] == str(150 * 60) == env["VLLM_ENGINE_READY_TIMEOUT_S"]
    assert number("ray.serve-llm.engine-start-timeout") < 150 * 60
    assert "RAYLLM_ENGINE_START_TIMEOUT_S" in fact("ray.serve-llm.engine-start-timeout").literal


def _failed_start_threshold(mocks, target_replicas: int) -> int:
    """Serve's rule (ray deployment_state.py `_failed_to_start_threshold`) applied to what the stack sets."""
    per_replica = int(env_of(head(mocks))["RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT"])
    constructor = llm_config(mocks)["deployment_config"]["max_constructor_retry_count"]
    return min(constructor, target_replicas * per_replica)


@pytest.mark.parametrize("target", [1, 2])
def test_serve_retries_the_replica_until_the_slice_can_be_reserved(slices, target):
    """Every start before the hosts are up fails after Ray's fixed slice reservation; Serve must allow more failed
    starts than fit in the node-provisioning and image-pull budgets, at every replica count it may target."""
    reservation_s = number("ray.tpu.head-reservation-timeout")
    failing_starts = math.ceil(
        (NODE_PROVISIONING_MINUTES + IMAGE_PULL_MINUTES + HOST_START_MINUTES) * 60 / reservation_s
    )
    assert _failed_start_threshold(slices, target) > failing_starts
    # the defaults (20 and 3) would give up after three starts, five minutes into a 25-minute wait
    defaults = min(number("ray.serve.constructor-retry-count"), target * number("ray.serve.per-replica-retry-count"))
    assert defaults <= failing_starts


def test_both_retry_limits_are_set_where_serve_reads_them(slices):
    # the per-replica factor: in the Serve controller's environment, which is the head's (Ray's head resource)
    assert "RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT" in env_of(head(slices))
    assert "RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT" in fact("ray.serve.per-replica-retry-count").literal
    assert "RAY_SERVE_MAX_PER_REPLICA_RETRY_COUNT" not in env_of(worker(slices))
    # the cap: in LLMConfig.deployment_config (Serve drops it silently in serveConfigV2's deployments list)
    app = serve(slices)["applications"][0]
    assert "deployments" not in app
    assert "max_constructor_retry_count" in llm_config(slices)["deployment_config"]


def test_jax_settings_are_on_the_tpu_workers_and_the_executor_in_the_runtime_env(slices):
    runtime = llm_config(slices)["runtime_env"]["env_vars"]
    assert runtime["TPU_MULTIHOST_BACKEND"] == "ray"  # read where the vLLM config is built
    assert not {"JAX_PLATFORMS", "ENABLE_PJRT_COMPATIBILITY", "TPU_BACKEND_TYPE"} & set(runtime)
    assert {"JAX_PLATFORMS": "tpu,cpu", "ENABLE_PJRT_COMPATIBILITY": "true"}.items() <= env_of(worker(slices)).items()
    assert not {"JAX_PLATFORMS", "ENABLE_PJRT_COMPATIBILITY"} & set(env_of(head(slices)))
    assert "TPU_BACKEND_TYPE" not in env_of(worker(slices))  # read by nothing (upstream ledger)


def test_the_fixed_slice_gets_the_same_limits():
    fixed = stack(replicas=ONE_SLICE)
    config = yaml.safe_load(ray_service(fixed)["spec"]["serveConfigV2"])
    (llm,) = config["applications"][0]["args"]["llm_configs"]
    assert llm["runtime_env"]["env_vars"]["RAYLLM_ENGINE_START_TIMEOUT_S"] == str(40 * 60)  # startupMinutes default
    assert _failed_start_threshold(fixed, 1) > 1


def test_each_start_waits_for_its_whole_slice_before_ray_reads_the_slices_nodes(slices):
    """Ray Serve LLM reads a slice group's nodes without waiting for it to be placed, and a pending group's empty node
    id fails the start in seconds (ledger: ray.serve-llm.node-init-reads-pending-group): the Serve config names a
    callback the server image ships, whose hook, which runs before that read (ray.serve-llm.callback-before-node-init),
    awaits the group (ray.serve-llm.callback-ctx-placement-group)."""
    import ast
    from pathlib import Path

    from tpu_stacks.vllm.multihost_plan import CALLBACK_CLASS, SERVE_IMAGE_DIR

    root = Path(__file__).resolve().parents[2]
    assert llm_config(slices)["callback_config"] == {"callback_class": CALLBACK_CLASS}
    module, _, name = CALLBACK_CLASS.partition(":")
    source = (root / SERVE_IMAGE_DIR / f"{module}.py").read_text()
    tree = ast.parse(source)
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
    base_module = fact("ray.serve-llm.callback-ctx-placement-group").path.removesuffix(".py").replace("/", ".")
    assert f"from {base_module} import CallbackBase" in source and [b.id for b in cls.bases] == ["CallbackBase"]
    (hook,) = [n for n in cls.body if isinstance(n, ast.AsyncFunctionDef) and n.name == "on_before_node_init"]
    awaited = [ast.unparse(n.value) for n in ast.walk(hook) if isinstance(n, ast.Await)]
    assert awaited == ["group.ready()"] and "group = self.ctx.placement_group" in ast.unparse(hook)
    # the image puts the module where every Ray worker process imports it, and its build imports it
    dockerfile = (root / SERVE_IMAGE_DIR / "Dockerfile").read_text()
    assert f"COPY {module}.py /opt/tpu-stacks/" in dockerfile and "ENV PYTHONPATH=/opt/tpu-stacks" in dockerfile
    assert f"load_class('{CALLBACK_CLASS}')" in dockerfile
