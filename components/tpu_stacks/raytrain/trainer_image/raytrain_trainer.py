"""Run MaxText's training entry point on every TPU VM of one or more slices, under Ray Train.

Written for tpu-stacks' RayTrainStack. The stack starts it on the Ray head (the RayJob's
entrypoint, or `ray job submit` by hand) as

    python /app/raytrain_trainer.py --accelerator-type=TPU-V6E --topology=4x4 --hosts-per-slice=4 \
        --chips-per-host=4 --slices=1 --max-failures=1 --storage-path=/data/ray-train \
        /app/maxtext/src/MaxText/configs/base.yml key=value ...

The flags describe the slice the stack derived from its TPU catalogue; from them come Ray Train's
ScalingConfig (one worker per TPU VM, all its chips, the slice topology and accelerator type) and
its FailureConfig. Everything after the flags is MaxText's own argv. A worker that fails makes Ray
Train restart the group (up to --max-failures); MaxText then resumes from the run's latest
checkpoint under base_output_directory/run_name. Ray is imported only to run, so the argument
handling is testable without it.
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

ICI_SETTING = re.compile(r"^ici_([a-z_]+)_parallelism=(-?\d+)$")
MAXTEXT_PROGRAM = "MaxText.train"
"""argv[0] MaxText's main receives: it reads the config file at argv[1] and key=value after it."""
log = logging.getLogger("raytrain_trainer")


class LaunchError(ValueError):
    """The command line does not describe a run this trainer can start."""


@dataclass(frozen=True)
class SliceLayout:
    """The TPU capacity of the run, as the RayCluster provides it."""

    accelerator_type: str
    topology: str
    hosts_per_slice: int
    chips_per_host: int
    slices: int

    @property
    def workers(self) -> int:
        """One Ray Train worker per TPU VM, across all slices."""
        return self.hosts_per_slice * self.slices

    @property
    def chips_per_slice(self) -> int:
        return self.hosts_per_slice * self.chips_per_host


@dataclass(frozen=True)
class Launch:
    layout: SliceLayout
    max_failures: int
    storage_path: str
    maxtext_argv: tuple[str, ...]

    @property
    def run_name(self) -> str:
        """MaxText's run_name, which also names the Ray Train run (one name for both)."""
        for arg in self.maxtext_argv:
            if arg.startswith("run_name="):
                return arg.split("=", 1)[1]
        return ""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="raytrain_trainer", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--accelerator-type", required=True, help="Ray's TPU type, e.g. TPU-V6E")
    parser.add_argument("--topology", required=True, help="one slice's topology, e.g. 4x4")
    parser.add_argument("--hosts-per-slice", type=int, required=True, help="TPU VMs in one slice")
    parser.add_argument("--chips-per-host", type=int, required=True, help="TPU chips of one VM")
    parser.add_argument("--slices", type=int, default=1, help="identical slices (data parallel over DCN)")
    parser.add_argument("--max-failures", type=int, default=0, help="worker-group restarts (-1: unlimited)")
    parser.add_argument("--storage-path", required=True, help="shared path for Ray Train's run state")
    parser.add_argument("maxtext", nargs=argparse.REMAINDER, help="MaxText config file, then key=value settings")
    return parser


def parse_launch(argv: Sequence[str]) -> Launch:
    """Read and check the command line (without the program name)."""
    args = _parser().parse_args(list(argv))
    layout = SliceLayout(args.accelerator_type, args.topology, args.hosts_per_slice, args.chips_per_host, args.slices)
    launch = Launch(layout, args.max_failures, args.storage_path, tuple(args.maxtext))
    check_launch(launch)
    return launch


def check_launch(launch: Launch) -> None:
    """Refuse what would fail only after the TPUs are reserved."""
    layout = launch.layout
    if not re.fullmatch(r"TPU-[A-Z0-9]+", layout.accelerator_type):
        raise LaunchError(f"--accelerator-type {layout.accelerator_type!r} is not a Ray TPU type such as TPU-V6E")
    if not re.fullmatch(r"\d+(x\d+){1,2}", layout.topology):
        raise LaunchError(f"--topology {layout.topology!r} is not a TPU topology such as 4x4 or 2x2x2")
    chips = math.prod(int(d) for d in layout.topology.split("x"))
    if min(layout.hosts_per_slice, layout.chips_per_host, layout.slices) < 1 or chips != layout.chips_per_slice:
        raise LaunchError(
            f"{layout.hosts_per_slice} hosts x {layout.chips_per_host} chips is not the {chips} chips of a "
            f"{layout.topology} slice"
        )
    if not launch.maxtext_argv or "=" in launch.maxtext_argv[0]:
        raise LaunchError("the MaxText config file (e.g. .../MaxText/configs/base.yml) must follow the flags")
    if not launch.run_name:
        raise LaunchError("run_name=... is required: it names the checkpoints a restart resumes from")
    axes = [(m.group(1), int(m.group(2))) for m in map(ICI_SETTING.match, launch.maxtext_argv[1:]) if m]
    fixed = math.prod(size for _, size in axes if size != -1)
    auto = sum(1 for _, size in axes if size == -1)
    if axes and (
        auto > 1 or (auto and layout.chips_per_slice % fixed) or (not auto and fixed != layout.chips_per_slice)
    ):
        shown = " x ".join(f"{axis}={size}" for axis, size in axes)
        raise LaunchError(f"ici parallelism {shown} does not multiply to the slice's {layout.chips_per_slice} chips")


def scaling_config_kwargs(layout: SliceLayout) -> dict[str, Any]:
    """Ray Train's ScalingConfig: a worker per TPU VM holding all its chips, spread over the VMs."""
    return {
        "use_tpu": True,
        "num_workers": layout.workers,
        "topology": layout.topology,
        "accelerator_type": layout.accelerator_type,
        "resources_per_worker": {"TPU": layout.chips_per_host},
        "placement_strategy": "SPREAD",
    }


def maxtext_main_argv(launch: Launch) -> list[str]:
    return [MAXTEXT_PROGRAM, *launch.maxtext_argv]


def train_loop_per_worker(config: dict[str, Any]) -> None:
    """On every TPU VM: MaxText's own training loop (Ray Train has set up jax.distributed)."""
    from MaxText.train import main as maxtext_main  # only in the image

    maxtext_main(config["argv"])


def run(launch: Launch) -> int:
    """Train; 0 when the run finished, 1 when it failed after its restarts."""
    os.environ.setdefault("RAY_TRAIN_V2_ENABLED", "1")  # JaxTrainer is a Ray Train V2 API
    import ray
    from ray.train.v2.api.config import FailureConfig, RunConfig, ScalingConfig
    from ray.train.v2.jax import JaxTrainer

    trainer = JaxTrainer(
        train_loop_per_worker=train_loop_per_worker,
        train_loop_config={"argv": maxtext_main_argv(launch)},
        scaling_config=ScalingConfig(**scaling_config_kwargs(launch.layout)),
        run_config=RunConfig(
            name=launch.run_name,
            storage_path=launch.storage_path,
            failure_config=FailureConfig(max_failures=launch.max_failures),
        ),
    )
    try:
        result = trainer.fit()  # Ray Train V2 raises once the restarts are used up
    except Exception:  # noqa: BLE001 - report and exit non-zero: the RayJob then shows Failed
        log.exception("training failed: %s", launch.run_name)
        return 1
    finally:
        ray.shutdown()
    if getattr(result, "error", None):
        log.error("training failed: %s", result.error)
        return 1
    log.info("training complete: %s", launch.run_name)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        launch = parse_launch(sys.argv[1:] if argv is None else argv)
    except LaunchError as error:
        print(f"raytrain_trainer: {error}", file=sys.stderr)
        return 2
    return run(launch)


if __name__ == "__main__":
    sys.exit(main())
