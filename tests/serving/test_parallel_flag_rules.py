"""serving/parallel_flags.py against the parsers it reads for: which flag counts, what value it must have, and the
message when it cannot.

Sources: vllm-tpu 0.29.0's vllm/engine/arg_utils.py declares `--tensor-parallel-size`/`-tp` (line 1074, ledger:
vllm.flag.tensor-parallel-size) and `--pipeline-parallel-size`/`-pp` (lines 1036-1037), type int, store action;
its FlexibleArgumentParser reads underscores as dashes (vllm/utils/argparse_utils.py: "allows both underscore and
dash in names"); SGLang-JAX declares `--tensor-parallel-size`/`--tp-size` on a plain argparse parser
(ledger: sglang.flag.tp-size). Which occurrence counts is asked of Python's own argparse below: a store action
keeps the last value given (docs.python.org/3/library/argparse.html, action 'store').
"""

from __future__ import annotations

import argparse
import shlex

import pytest

from tpu_stacks.serving.parallel_flags import (
    TP_FLAG,
    Parallelism,
    check_parallelism,
    pipeline_parallel_flags,
    tensor_parallel_flags,
    tensor_parallel_pattern,
)

SGLANG = ("--tensor-parallel-size", "--tp-size")


def _vllm_like_parser() -> argparse.ArgumentParser:
    """vLLM's two flags as arg_utils.py declares them (the dash spellings; the underscore ones are vLLM's rewrite)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    parser.add_argument("--pipeline-parallel-size", "-pp", type=int, default=1)
    return parser


@pytest.mark.parametrize(
    "line",
    [
        "-tp 4",
        "--tensor-parallel-size=8",
        "-tp 4 --tensor-parallel-size 8",
        "--tensor-parallel-size 8 -tp 2 -pp 2",
        "-pp 2 -tp 2 --pipeline-parallel-size=4",
    ],
)
def test_the_last_flag_is_the_one_argparse_keeps(line):
    parsed = _vllm_like_parser().parse_args(shlex.split(line))
    assert tensor_parallel_flags(line)[-1].value == parsed.tensor_parallel_size
    pipelines = pipeline_parallel_flags(line)
    assert (pipelines[-1].value if pipelines else 1) == parsed.pipeline_parallel_size
    assert check_parallelism(line, 16).pipeline == parsed.pipeline_parallel_size


def test_each_flag_is_recorded_as_written_with_its_value_and_place():
    text = "--model m -tp 4 --tensor_parallel_size=8"
    flags = tensor_parallel_flags(text)
    assert [(f.written, f.value, f.start, f.name) for f in flags] == [
        ("-tp 4", 4, 10, "-tp"),
        ("--tensor_parallel_size=8", 8, 16, "--tensor_parallel_size"),
    ]
    (pp,) = pipeline_parallel_flags("--x -pp 2")
    assert (pp.written, pp.value, pp.start, pp.name) == ("-pp 2", 2, 4, "-pp")


def test_vllm_s_spellings_keep_vllm_s_pattern_and_sglang_s_get_exactly_theirs():
    assert tensor_parallel_pattern(()) is TP_FLAG
    assert tensor_parallel_pattern(("--tensor-parallel-size", "-tp")) is TP_FLAG
    sglang = tensor_parallel_pattern(SGLANG)
    assert sglang is not TP_FLAG
    text = "--tp-size 4 -tp 2 --tensor_parallel_size 2 --tensor-parallel-size=8"
    assert [f.written for f in tensor_parallel_flags(text, sglang)] == ["--tp-size 4", "--tensor-parallel-size=8"]
    assert check_parallelism("--tp-size 4", 8, sglang).wrong[0].written == "--tp-size 4"
    assert check_parallelism("--tp-size 4 -tp 8", 8, sglang).wrong[0].value == 4


@pytest.mark.parametrize(
    ("text", "devices", "pipeline", "expected", "wrong", "fix"),
    [
        ("-tp 8", 8, 1, 8, [], "set it to 8"),
        ("-tp 4", 8, 1, 8, ["-tp 4"], "set it to 8"),
        ("-tp 4 -pp 2", 8, 2, 4, [], "set it to 4 (with pipeline parallel 2)"),
        ("-tp 8 -pp 2", 8, 2, 4, ["-tp 8"], "set it to 4 (with pipeline parallel 2)"),
        ("-tp 8 -pp 1", 8, 1, 8, [], "set it to 8"),
        ("-pp 4 -tp 8 -pp 2", 8, 2, 4, ["-tp 8"], "set it to 4 (with pipeline parallel 2)"),  # the last -pp
        ("-tp 4 -tp 8", 8, 1, 8, [], "set it to 8"),  # only the last -tp counts
        ("-tp 8 -tp 4", 8, 1, 8, ["-tp 4"], "set it to 8"),
        ("-tp 2 -pp 3", 8, 3, 8, ["-tp 2"], "use a pipeline-parallel size that divides 8"),
        ("-tp 8 -pp 0", 8, 0, 8, [], "use a pipeline-parallel size that divides 8"),
        ("--model m", 8, 1, 8, [], "set it to 8"),
    ],
)
def test_tensor_times_pipeline_parallel_is_the_devices(text, devices, pipeline, expected, wrong, fix):
    rule = check_parallelism(text, devices)
    assert (rule.pipeline, rule.expected, [f.written for f in rule.wrong], rule.fix) == (pipeline, expected, wrong, fix)
    assert rule.pipeline_fits == (pipeline >= 1 and devices % pipeline == 0)
    last = pipeline_parallel_flags(text)
    assert rule.pipeline_flag == (last[-1] if last else None)


def test_stages_that_divide_the_devices_fit_and_others_do_not():
    fits = {p: Parallelism(devices=8, pipeline=p, wrong=()).pipeline_fits for p in range(0, 10)}
    assert [p for p, ok in fits.items() if ok] == [1, 2, 4, 8]
