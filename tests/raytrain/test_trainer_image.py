"""Our Ray Train trainer (tpu_stacks/raytrain/trainer_image), without Ray or JAX: the command the
stack generates parses into the tutorial's ScalingConfig, MaxText gets its argv, mistakes stop
before any TPU is reserved; the image's Dockerfile and Cloud Build config take their pins from the
component; the folder ships as package data, and its hash names the image tag."""

import importlib.util
import shlex
import shutil
import sys
import tomllib
import types
from pathlib import Path

import pytest
import yaml

from tpu_stacks.cluster.spec import ClusterSpec
from tpu_stacks.raytrain.image import substitutions
from tpu_stacks.raytrain.plan import plan_raytrain
from tpu_stacks.raytrain.sources import build_inputs_digest, trainer_image_dir
from tpu_stacks.raytrain.spec import MAXTEXT_CONFIG, TRAINER_IMAGE_DIR, TRAINER_PATH, RayTrainSpec

ROOT = Path(__file__).resolve().parents[2]
IMAGE = ROOT / "components" / "tpu_stacks" / "raytrain" / "trainer_image"
TUTORIAL = {
    "model": "llama3-8b",
    "topology": "4x4",
    "parallelism": {"fsdp": 4, "tensor": 4},
    "run_name": "rayjob-8b-4096-tp4-4x4",
}

CLUSTER = ClusterSpec(project="proj", location="us-east5-b", release_channel="RAPID")


def load_trainer():
    spec = importlib.util.spec_from_file_location("raytrain_trainer_under_test", IMAGE / "raytrain_trainer.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


trainer = load_trainer()


def entrypoint_argv(**overrides) -> list[str]:
    """The flags and MaxText argv of the RayJob's entrypoint the component generates."""
    plan = plan_raytrain(RayTrainSpec.model_validate({**TUTORIAL, **overrides}), CLUSTER)
    command = shlex.split(plan.entrypoint())
    assert command[:2] == ["python", TRAINER_PATH]
    return command[2:]


def test_importing_the_trainer_needs_no_ray():
    assert "ray" not in vars(trainer) and "jax" not in vars(trainer)


def test_stack_command_gives_the_tutorials_scaling_config():
    launch = trainer.parse_launch(entrypoint_argv())
    assert trainer.scaling_config_kwargs(launch.layout) == {
        "use_tpu": True,
        "num_workers": 4,
        "topology": "4x4",
        "accelerator_type": "TPU-V6E",
        "resources_per_worker": {"TPU": 4},
        "placement_strategy": "SPREAD",
    }
    assert launch.run_name == "rayjob-8b-4096-tp4-4x4"
    assert launch.max_failures == 1 and launch.storage_path == "/data/ray-train"


def test_maxtext_gets_its_config_then_the_settings():
    launch = trainer.parse_launch(entrypoint_argv())
    argv = trainer.maxtext_main_argv(launch)
    assert argv[0] == "MaxText.train"  # MaxText reads the config file at argv[1]
    assert argv[1] == MAXTEXT_CONFIG
    assert "ici_fsdp_parallelism=4" in argv and "model_name=llama3-8b" in argv


def test_two_slices_are_eight_workers():
    launch = trainer.parse_launch(entrypoint_argv(slices=2))
    assert trainer.scaling_config_kwargs(launch.layout)["num_workers"] == 8
    assert launch.layout.chips_per_slice == 16


@pytest.mark.parametrize(
    "change,message",
    [
        (
            lambda a: [x.replace("--hosts-per-slice=4", "--hosts-per-slice=2") for x in a],
            "2 hosts x 4 chips is not the 16 chips",
        ),
        (lambda a: [x for x in a if not x.startswith("run_name=")], "run_name=... is required"),
        (lambda a: [x for x in a if x != MAXTEXT_CONFIG], "the MaxText config file"),
        (
            lambda a: [x.replace("ici_tensor_parallelism=4", "ici_tensor_parallelism=2") for x in a],
            "ici parallelism fsdp=4 x tensor=2 does not multiply to the slice's 16 chips",
        ),
        (
            lambda a: [x.replace("--accelerator-type=TPU-V6E", "--accelerator-type=v6e") for x in a],
            "is not a Ray TPU type",
        ),
    ],
)
def test_mistakes_stop_before_any_tpu_is_reserved(change, message, capsys):
    assert trainer.main(change(entrypoint_argv())) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("raytrain_trainer: ") and message in error and "\n" not in error


class FakeRay:
    """Just enough of ray.train.v2 to see what the trainer builds."""

    def __init__(self, fail: bool = False):
        self.calls: dict = {}
        self.fail = fail

    def modules(self) -> dict[str, types.ModuleType]:
        calls, fail = self.calls, self.fail

        def record(name):
            return lambda **kwargs: calls.setdefault(name, kwargs) or kwargs

        class JaxTrainer:
            def __init__(self, **kwargs):
                calls["JaxTrainer"] = kwargs

            def fit(self):
                if fail:
                    raise RuntimeError("worker group failed 2 times")
                return types.SimpleNamespace(error=None)

        ray = types.ModuleType("ray")
        ray.shutdown = lambda: calls.setdefault("shutdown", True)
        config = types.ModuleType("ray.train.v2.api.config")
        config.ScalingConfig, config.RunConfig, config.FailureConfig = (
            record("ScalingConfig"),
            record("RunConfig"),
            record("FailureConfig"),
        )
        jax = types.ModuleType("ray.train.v2.jax")
        jax.JaxTrainer = JaxTrainer
        names = ["ray.train", "ray.train.v2", "ray.train.v2.api"]
        return {
            "ray": ray,
            **{n: types.ModuleType(n) for n in names},
            "ray.train.v2.api.config": config,
            "ray.train.v2.jax": jax,
        }


def test_run_wires_scaling_failure_and_run_config(monkeypatch):
    fake = FakeRay()
    for name, module in fake.modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.delenv("RAY_TRAIN_V2_ENABLED", raising=False)
    launch = trainer.parse_launch(entrypoint_argv())
    assert trainer.run(launch) == 0
    import os

    assert os.environ["RAY_TRAIN_V2_ENABLED"] == "1"
    calls = fake.calls
    assert calls["ScalingConfig"] == trainer.scaling_config_kwargs(launch.layout)
    assert calls["FailureConfig"] == {"max_failures": 1}
    assert (
        calls["RunConfig"]["name"] == "rayjob-8b-4096-tp4-4x4"
        and calls["RunConfig"]["storage_path"] == "/data/ray-train"
    )
    assert calls["JaxTrainer"]["train_loop_config"] == {"argv": trainer.maxtext_main_argv(launch)}
    assert calls["JaxTrainer"]["train_loop_per_worker"] is trainer.train_loop_per_worker
    assert calls["shutdown"] is True


def test_a_failed_run_exits_non_zero(monkeypatch):
    for name, module in FakeRay(fail=True).modules().items():
        monkeypatch.setitem(sys.modules, name, module)
    assert trainer.run(trainer.parse_launch(entrypoint_argv())) == 1


def test_each_worker_runs_maxtexts_main_with_the_argv(monkeypatch):
    seen = []
    package, train = types.ModuleType("MaxText"), types.ModuleType("MaxText.train")
    train.main = seen.append
    monkeypatch.setitem(sys.modules, "MaxText", package)
    monkeypatch.setitem(sys.modules, "MaxText.train", train)
    trainer.train_loop_per_worker({"argv": ["MaxText.train", MAXTEXT_CONFIG, "steps=1"]})
    assert seen == [["MaxText.train", MAXTEXT_CONFIG, "steps=1"]]


def test_dockerfile_is_pinned_through_build_args():
    text = (IMAGE / "Dockerfile").read_text()
    assert "FROM rayproject/ray:${RAY_VERSION}-py312" in text
    assert "latest" not in text and "nightly" not in text
    assert 'fetch -q --depth 1 origin "${MAXTEXT_REVISION}"' in text
    assert 'test "$(git -C maxtext rev-parse HEAD)" = "${MAXTEXT_REVISION}"' in text  # the checkout is verified
    assert f"COPY raytrain_trainer.py {TRAINER_PATH}" in text
    assert MAXTEXT_CONFIG.startswith("/app/maxtext/src/") and "ENV PYTHONPATH=/app/maxtext/src:/app" in text
    for arg in ("RAY_VERSION", "MAXTEXT_REPOSITORY", "MAXTEXT_REVISION"):
        assert f"ARG {arg}\n" in text  # no default: the value comes from the component


def test_cloud_build_config_passes_the_components_pins():
    config = yaml.safe_load((IMAGE / "cloudbuild.yaml").read_text())
    (step,) = config["steps"]
    assert ":" in step["name"].rsplit("/", 1)[-1]  # the builder is pinned
    used = " ".join(step["args"]) + step["dir"] + " ".join(config["images"])
    for key in substitutions("image", "."):
        assert "${" + key + "}" in used  # logging: tests/gcp/test_cloud_build.py


def test_the_image_folder_ships_with_the_package():
    assert trainer_image_dir() == IMAGE  # the editable install of this checkout
    assert (ROOT / TRAINER_IMAGE_DIR).resolve() == IMAGE  # the path gcloud and the trigger build, from the root
    assert not (IMAGE / "__init__.py").exists()  # data, not a Python package
    package = IMAGE.parent
    globs = tomllib.loads((ROOT / "components" / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    shipped = {path for pattern in globs["tpu_stacks.raytrain"] for path in package.glob(pattern) if path.is_file()}
    sources = {path for path in IMAGE.rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    assert {"Dockerfile", "cloudbuild.yaml", "raytrain_trainer.py"} <= {path.name for path in sources}
    assert sources <= shipped


def test_the_digest_depends_on_the_files_not_on_where_they_are(tmp_path):
    copy = tmp_path / "elsewhere"
    shutil.copytree(IMAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert build_inputs_digest(copy) == build_inputs_digest() == build_inputs_digest(IMAGE)
    (copy / "Dockerfile").write_text((copy / "Dockerfile").read_text() + "# changed\n")
    assert build_inputs_digest(copy) != build_inputs_digest()
    with pytest.raises(FileNotFoundError, match="no image sources"):
        build_inputs_digest(tmp_path / "empty")
