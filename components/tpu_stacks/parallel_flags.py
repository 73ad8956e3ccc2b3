"""vLLM's tensor- and pipeline-parallel flags as written on a command line, and the one rule they follow.

vLLM shards the model over every device it is given: tensor parallel x pipeline parallel = the
devices of the slice (2 per tpu7x chip; `sizing.tensor_parallel_size`). A `--tensor-parallel-size`
that says otherwise loads for minutes and then crashes, or leaves chips idle. vLLM's parser takes the
flag as `--tensor-parallel-size N`, `--tensor-parallel-size=N` or `-tp N`, and `--pipeline-parallel-size`
/ `-pp` alike (vllm-project/vllm, vllm/engine/arg_utils.py, `add_cli_args`:
`parser.add_argument('--tensor-parallel-size', '-tp', type=int, ...)`, at commit 001999d2f360 and in
the v0.8 line the image catalogue pins); its FlexibleArgumentParser also reads underscores
(`--tensor_parallel_size`) as dashes (vllm/utils.py). The last occurrence wins, as in argparse.

One rule, two readers: VllmStack's plan refuses `extraArgs` that break it (vllm/plan.py), and the policy
pack reports any workload's container arguments that break it (policies, matching.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TP_FLAG = re.compile(r"(?:--tensor[-_]parallel[-_]size|(?<!\S)-tp)(?:=|\s+)(\d+)")
PP_FLAG = re.compile(r"(?:--pipeline[-_]parallel[-_]size|(?<!\S)-pp)(?:=|\s+)(\d+)")


@dataclass(frozen=True)
class TensorParallelFlag:
    """One `--tensor-parallel-size` (or `-tp`) on the command line, as written."""

    written: str
    """The flag and its value as the text has them (`-tp 4`, `--tensor-parallel-size=4`)."""
    value: int
    start: int
    """Where it starts in the text."""

    @property
    def name(self) -> str:
        """The flag's spelling alone (`-tp`, `--tensor_parallel_size`)."""
        return re.split(r"[=\s]", self.written, maxsplit=1)[0]


@dataclass(frozen=True)
class Parallelism:
    """What the arguments must say for `devices` devices, and the tensor-parallel flags that do not."""

    expected: int
    """The tensor-parallel size that uses every device (devices / pipeline stages)."""
    pipeline: int
    wrong: tuple[TensorParallelFlag, ...]

    @property
    def fix(self) -> str:
        stages = f" (with pipeline parallel {self.pipeline})" if self.pipeline > 1 else ""
        return f"set it to {self.expected}{stages}"


def tensor_parallel_flags(text: str) -> list[TensorParallelFlag]:
    """Every tensor-parallel flag of `text` (arguments joined with spaces), in order."""
    return [TensorParallelFlag(m.group(0), int(m.group(1)), m.start()) for m in TP_FLAG.finditer(text)]


def check_parallelism(text: str, devices: int) -> Parallelism:
    """The rule: tensor parallel x pipeline parallel = `devices`; flags in `text` that break it."""
    found = PP_FLAG.search(text)
    pipeline = int(found.group(1)) if found else 1
    expected = devices // pipeline if pipeline and devices % pipeline == 0 else devices
    wrong = tuple(flag for flag in tensor_parallel_flags(text) if flag.value != expected)
    return Parallelism(expected=expected, pipeline=pipeline, wrong=wrong)
