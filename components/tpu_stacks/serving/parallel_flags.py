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
pack reports any workload's container arguments that break it (policies, matching.py). Other engines spell the flag
their own way (SGLang-JAX `--tp-size`): the pack reads the spellings the engine's catalogue record declares
(`tensor_parallel_pattern`), vLLM's pattern where the record's spellings are all vLLM's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

TP_FLAG = re.compile(r"(?:--tensor[-_]parallel[-_]size|(?<!\S)-tp)(?:=|\s+)(\d+)")
VALUE = r"(?:=|\s+)(\d+)"


def tensor_parallel_pattern(spellings: Iterable[str]) -> re.Pattern[str]:
    """The pattern of an engine's tensor-parallel flag from the spellings its record declares (name and aliases):
    vLLM's (`TP_FLAG`, which also reads `-tp` and underscores) when it reads every one of them, else exactly these
    spellings (an argparse parser such as SGLang-JAX's reads no underscores)."""
    names = tuple(spellings)
    if not names or all(TP_FLAG.fullmatch(f"{name}=1") for name in names):
        return TP_FLAG
    ordered = sorted(names, key=len, reverse=True)
    return re.compile("(?:" + "|".join(rf"(?<!\S){re.escape(name)}" for name in ordered) + ")" + VALUE)


PIPELINE_PARALLEL = "--pipeline-parallel-size"
"""The pipeline-parallel flag's long name, which the stacks do not write (argparse's abbreviations of it are spelled
out before the patterns read a text: engine_flags.spelled_out)."""
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
    """What the arguments must say for `devices` devices, and the flags that do not."""

    devices: int
    pipeline: int
    """The pipeline stages the last pipeline-parallel flag asks for (1 without one)."""
    wrong: tuple[TensorParallelFlag, ...]
    """Tensor-parallel flags whose value is not `expected`."""
    pipeline_flag: TensorParallelFlag | None = None
    """The pipeline-parallel flag that counts (the last one), as written; None: one stage."""

    @property
    def pipeline_fits(self) -> bool:
        """Whether the stages divide the devices: otherwise no tensor-parallel size uses them all."""
        return self.pipeline >= 1 and self.devices % self.pipeline == 0

    @property
    def expected(self) -> int:
        """The tensor-parallel size that uses every device (devices / pipeline stages)."""
        return self.devices // self.pipeline if self.pipeline_fits else self.devices

    @property
    def fix(self) -> str:
        if not self.pipeline_fits:
            return f"use a pipeline-parallel size that divides {self.devices}"
        stages = f" (with pipeline parallel {self.pipeline})" if self.pipeline > 1 else ""
        return f"set it to {self.expected}{stages}"


def tensor_parallel_flags(text: str, pattern: re.Pattern[str] = TP_FLAG) -> list[TensorParallelFlag]:
    """Every tensor-parallel flag of `text` (arguments joined with spaces), in order; vLLM's spellings unless the
    engine's `pattern` (tensor_parallel_pattern) is given."""
    return [TensorParallelFlag(m.group(0), int(m.group(1)), m.start()) for m in pattern.finditer(text)]


def pipeline_parallel_flags(text: str) -> list[TensorParallelFlag]:
    """Every pipeline-parallel flag of `text`, in order (the same record: flag, value, where)."""
    return [TensorParallelFlag(m.group(0), int(m.group(1)), m.start()) for m in PP_FLAG.finditer(text)]


def check_parallelism(text: str, devices: int, tp_pattern: re.Pattern[str] = TP_FLAG) -> Parallelism:
    """The rule: tensor parallel x pipeline parallel = `devices`; flags in `text` that break it. The last
    occurrence of each flag is the one vLLM's argparse keeps. `tp_pattern`: the engine's tensor-parallel
    spellings (tensor_parallel_pattern), vLLM's by default."""
    pipelines = pipeline_parallel_flags(text)
    last = pipelines[-1] if pipelines else None
    rule = Parallelism(devices=devices, pipeline=last.value if last else 1, wrong=(), pipeline_flag=last)
    flags = tensor_parallel_flags(text, tp_pattern)
    wrong = tuple(flag for flag in flags[-1:] if flag.value != rule.expected)
    return Parallelism(devices=devices, pipeline=rule.pipeline, wrong=wrong, pipeline_flag=last)
