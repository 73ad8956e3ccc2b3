"""A server's flags read as its own argparse reads them (serving/engine_flags.py), the one reader of a stack's
extraArgs and of the policy pack: the last value wins; `--flag=value`, `--flag value` and an argument with spaces;
vLLM's parser takes underscores for dashes (FlexibleArgumentParser, vllm/utils/argparse_utils.py at the pinned
0.29.0), SGLang-JAX's does not; a flag the stack writes from a key is refused in extraArgs unless it says the same;
the dtype flags are read by the engine's own dtype rule."""

from __future__ import annotations

import pytest

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.models import lookup_model
from tpu_stacks.errors import UserError
from tpu_stacks.serving.engine_flags import (
    GivenFlag,
    Written,
    check_written_flags,
    extra_args_dtypes,
    extra_args_number,
    flag_value,
    flag_values,
    given_flags,
    served_dtypes,
    split_argument,
)
from tpu_stacks.sglang.engine import SGLANG

LLAMA = lookup_model("meta-llama/Llama-3.1-8B").architecture  # a bf16 checkpoint


def test_every_form_of_a_flag_with_the_argument_it_came_from():
    arguments = ["--a=1", "--b", "2", "-q", "fp8", "-qint8", "--n", "-1", "--switch", "--last"]
    assert given_flags(arguments, VLLM) == [
        GivenFlag(0, "--a", "1", "--a=1"),
        GivenFlag(1, "--b", "2", "--b 2"),
        GivenFlag(3, "-q", "fp8", "-q fp8"),
        GivenFlag(5, "-q", "int8", "-qint8"),  # argparse's attached short form, for a short flag vLLM declares
        GivenFlag(6, "--n", "-1", "--n -1"),  # a negative number is a value, not a flag
        GivenFlag(8, "--switch", None, "--switch"),  # followed by a flag: a switch
        GivenFlag(9, "--last", None, "--last"),  # followed by nothing
    ]
    assert given_flags(["--a 1"]) == [GivenFlag(0, "--a 1", None, "--a 1")]  # one argument: no shell splits it


def test_vllm_reads_underscores_as_dashes_up_to_a_json_key_path_and_sglang_does_not():
    arguments = ["--max_num_seqs=4", "--hf_overrides.rope_scaling", "x", "-q", "fp8"]
    assert [g.name for g in given_flags(arguments, VLLM)] == ["--max-num-seqs", "--hf-overrides.rope_scaling", "-q"]
    assert [g.name for g in given_flags(arguments, SGLANG)] == ["--max_num_seqs", "--hf_overrides.rope_scaling", "-q"]


def test_the_last_value_wins_and_a_switch_reads_true():
    assert flag_values(["--a=1", "--a", "2", "--on"], VLLM) == {"--a": "2", "--on": "true"}
    assert flag_value(["--served-model-name=a", "--served_model_name", "b"], "--served-model-name", VLLM) == "b"
    assert flag_value(["--served_model_name", "b"], "--served-model-name") is None  # as written: another flag
    assert flag_value(["--served-model-name"], "--served-model-name") is None  # given no value


@pytest.mark.parametrize(
    "part, tokens",
    [("--a=1", ["--a=1"]), ("--a 1", ["--a", "1"]), ("--a 'x y'", ["--a", "x y"]), ("--a 'x", ["--a", "'x"]), (3, [])],
)
def test_an_argument_splits_as_a_shell_would(part, tokens):
    assert split_argument(part) == tokens


@pytest.mark.parametrize(
    "flags, weight, kv",
    [
        ({}, "bf16", "bf16"),  # --dtype auto: the checkpoint's bf16; --kv-cache-dtype auto: the weights'
        ({"--dtype": "float32"}, "fp32", "fp32"),
        ({"--kv-cache-dtype": "fp8"}, "bf16", "fp8"),
        ({"-q": "fp8"}, "fp8", "bf16"),  # quantized weights keep a bf16 KV cache at auto
        ({"--quantization": "FP8", "--kv-cache-dtype": "fp8_e5m2"}, "fp8", "fp8"),
    ],
)
def test_the_dtypes_follow_vllms_rule(flags, weight, kv):
    dtypes = served_dtypes(VLLM, flags, LLAMA)
    assert (dtypes.weight, dtypes.kv, dtypes.problem) == (weight, kv, None)


@pytest.mark.parametrize(
    "flags, problem, flag",
    [
        ({"--quantization": "awq"}, "--quantization awq is not one the memory model sizes (fp8)", "--quantization"),
        ({"--dtype": "bf16"}, "--dtype/--kv-cache-dtype bf16/auto is not sizable", "--dtype"),
        ({"--kv-cache-dtype": "int4"}, "--dtype/--kv-cache-dtype None/int4 is not sizable", "--kv-cache-dtype"),
    ],
)
def test_a_dtype_the_memory_model_cannot_size_names_its_flag(flags, problem, flag):
    dtypes = served_dtypes(VLLM, flags, LLAMA)
    assert (dtypes.weight, dtypes.kv, dtypes.problem, dtypes.flag.name) == (None, None, problem, flag)


def test_extra_args_dtypes_are_sized_and_a_bad_one_is_refused_naming_its_argument():
    assert extra_args_dtypes("vllm", ["--kv_cache_dtype", "fp8"], VLLM, LLAMA).kv == "fp8"
    with pytest.raises(UserError) as refused:
        extra_args_dtypes("vllm", ["--enforce-eager", "-q", "awq"], VLLM, LLAMA)
    assert str(refused.value) == (
        "vllm.extraArgs[1]: '-q awq' --quantization awq is not one the memory model sizes (fp8); give a value the "
        "memory model sizes, or leave it out (the engine's own choice is sized)"
    )


WRITTEN = {
    "--max-model-len": Written("vllm.maxModelLen", "4096"),
    "--port": Written(None, "8000", "the probes use it"),
    "--quantization": Written("vllm.quantization", "fp8"),  # to show an alias (-q) belongs to its flag
}


@pytest.mark.parametrize(
    "extra, message",
    [
        (
            ["--enforce-eager", "--max_model_len=131072"],
            "vllm.extraArgs[1]: '--max_model_len=131072' sets --max-model-len, which the stack writes from "
            "vllm.maxModelLen (4096): the slice, its memory and its traffic were sized for the key's; set "
            "vllm.maxModelLen instead",
        ),
        (
            ["--port", "9000"],
            "vllm.extraArgs[0]: '--port 9000' sets --port, which the stack fixes at 8000 (the probes use it); leave it out",
        ),
        (["-q awq"], "vllm.extraArgs[0]: '-q awq' sets -q, which the stack writes from vllm.quantization (fp8)"),
    ],
)
def test_a_flag_the_stack_writes_is_refused_with_another_value(extra, message):
    with pytest.raises(UserError) as refused:
        check_written_flags("vllm", extra, VLLM, WRITTEN)
    assert str(refused.value).startswith(message)


def test_the_same_value_or_number_and_flags_the_stack_does_not_write_pass():
    check_written_flags(
        "vllm", ["--max-model-len", "4096", "--port=8000", "-q", "fp8", "--enforce-eager"], VLLM, WRITTEN
    )
    fraction = {"--mem-fraction-static": Written("sglang.memFractionStatic", "0.88")}
    check_written_flags("sglang", ["--mem-fraction-static=0.880"], SGLANG, fraction)  # the same fraction
    with pytest.raises(UserError, match="vllm.maxModelLen"):  # vLLM's int() refuses 4096.0: not the same value
        check_written_flags("vllm", ["--max-model-len=4096.0"], VLLM, WRITTEN)
    with pytest.raises(UserError, match="vllm.maxModelLen"):  # an abbreviation argparse takes for it
        check_written_flags("vllm", ["--max-model", "8192"], VLLM, WRITTEN)
    switch = {"--disable-radix-cache": Written("sglang.radixCache", "true")}
    check_written_flags("sglang", ["--disable-radix-cache"], SGLANG, switch)  # the switch the key already sets
    with pytest.raises(UserError, match=r"sglang.extraArgs\[0\]"):
        check_written_flags(
            "sglang",
            ["--disable-radix-cache"],
            SGLANG,
            {"--disable-radix-cache": Written("sglang.radixCache", "false")},
        )


def test_a_number_is_read_under_any_spelling_and_a_bad_one_refused():
    assert extra_args_number("sglang", ["--chunked-prefill-size", "2048"], SGLANG, "prefill_tokens") == 2048
    assert extra_args_number("sglang", ["--enforce"], SGLANG, "prefill_tokens") is None
    assert extra_args_number("sglang", ["--tensor-parallel-size", "4", "--tp-size=8"], SGLANG, "tensor_parallel") == 8
    assert extra_args_number("sglang", ["--chunked-prefill-size", "-1"], SGLANG, "prefill_tokens") == -1
    for bad in (["--chunked-prefill-size"], ["--chunked-prefill-size=1k"]):
        with pytest.raises(UserError) as refused:
            extra_args_number("sglang", ["--x", *bad], SGLANG, "prefill_tokens")
        assert str(refused.value) == (
            f"sglang.extraArgs[1]: {bad[0]!r} gives --chunked-prefill-size no whole number; write "
            "--chunked-prefill-size=<tokens>, or leave it out"
        )


@pytest.mark.parametrize(
    "arguments, found",
    [
        ([], None),
        (["--async-scheduling"], True),
        (["--no-async-scheduling"], False),
        (["--async-scheduling", "--no_async_scheduling"], False),  # the last, in vLLM's underscore spelling
        (["--no-async", "--async-sched"], True),  # abbreviations argparse takes for them
        (["--no-async"], False),
        (["--no-async-scheduling", "--async-scheduling", "false"], True),  # `false` is a positional, not its value
        (["--no-async-scheduling", "--async-scheduling=true"], True),  # a Serve config's engine_kwargs as flags
        (["--async-scheduling=false"], False),
        (["--async-scheduling=0"], False),
    ],
)
def test_a_switch_is_the_last_of_its_two_spellings(arguments, found):
    from tpu_stacks.serving.engine_flags import switch_given

    assert switch_given(arguments, "--async-scheduling", VLLM) is found


def test_a_short_flag_takes_a_value_of_any_length_attached_and_only_long_names_are_abbreviations():
    assert given_flags(["-qx"], VLLM) == [GivenFlag(0, "-q", "x", "-qx")]
    known = ["--max-model-len"]
    assert [g.name for g in given_flags(["--max-model", "1", "--max.x=1", "-max=1"], known=known)] == [
        "--max-model-len",  # the one name it begins
        "--max.x",  # a JSON key path is its own
        "-max",  # a single-dash name is not a long name's abbreviation
    ]
    assert [g.name for g in given_flags(["--m=1"], known=[*known, "--model"])] == ["--m"]  # ambiguous: as written


def test_an_engine_without_a_dtype_rule_is_named_and_its_refusal_names_the_section():
    from tpu_stacks.jetstream.engine import JETSTREAM

    jetstream = JETSTREAM[0]
    dtypes = served_dtypes(jetstream, {}, LLAMA)
    assert (dtypes.weight, dtypes.kv, dtypes.flag) == (None, None, None)
    assert dtypes.problem == f"jetstream {jetstream.version} declares no dtype rule"
    with pytest.raises(UserError) as refused:
        extra_args_dtypes("jetstream", ["--x"], jetstream, LLAMA)
    assert str(refused.value).startswith(f"jetstream.extraArgs: '--x' jetstream {jetstream.version} declares no")


def test_the_last_of_two_unsizable_dtype_flags_is_the_one_named():
    with pytest.raises(UserError, match=r"^vllm.extraArgs\[2\]: '--quantization=awq'"):
        extra_args_dtypes("vllm", ["-q", "fp8", "--quantization=awq"], VLLM, LLAMA)


def test_only_a_flag_with_its_value_after_a_space_is_refused_as_one_argument():
    from tpu_stacks.serving.engine_flags import check_extra_args_form

    check_extra_args_form("vllm", ["--served-model-name=my model", "plain words", "--a=b c", "-q"])
    with pytest.raises(UserError) as refused:
        check_extra_args_form("vllm", ["--x=1", "--kv-cache-dtype  fp8 "])
    assert str(refused.value) == (
        "vllm.extraArgs[1]: '--kv-cache-dtype  fp8 ' is a flag and its value in one argument, which the server "
        "takes for a positional (no shell splits it); write --kv-cache-dtype=fp8, or the flag and its value as two "
        "entries"
    )


def test_a_value_given_to_a_switch_in_extra_args_is_refused():
    """vLLM's BooleanOptionalAction takes no value: `--async-scheduling=false` stops the server at start."""
    from tpu_stacks.serving.engine_flags import switch_given

    with pytest.raises(UserError) as refused:
        switch_given(["--x", "--async-scheduling=false"], "--async-scheduling", VLLM, "vllm")
    assert str(refused.value) == (
        "vllm.extraArgs[1]: '--async-scheduling=false' gives a value to a switch, which the server refuses at start; "
        "write --async-scheduling or --no-async-scheduling"
    )
    assert switch_given(["--async-scheduling", "false"], "--async-scheduling", VLLM, "vllm") is True


def test_a_switch_is_not_given_a_value_by_the_argument_after_it():
    """`--async-scheduling a=b`: argparse leaves `a=b` to a positional; the switch is on and not refused (what
    follows is not an `=` of its own)."""
    from tpu_stacks.serving.engine_flags import switch_given

    assert switch_given(["--async-scheduling", "a=b"], "--async-scheduling", VLLM, "vllm") is True
    with pytest.raises(UserError, match="gives a value to a switch"):
        switch_given(["--no-async-scheduling=x"], "--async-scheduling", VLLM, "vllm")


def test_an_integer_setting_is_the_same_only_as_the_same_integer():
    from tpu_stacks.serving.engine_flags import _same

    assert _same("4096", "4096") and _same("0.80", "0.8")
    assert not _same("4096.0", "4096") and not _same("x", "4096") and not _same("x", "0.8")


def test_a_value_is_read_under_an_abbreviation_argparse_takes_for_its_flag():
    """`flag_value` reads `--served-model=foo` as vLLM reads it, `--served-model-name` (ledger: vllm.args.abbreviations)."""
    from tpu_stacks.serving.engine_flags import flag_value

    assert flag_value(["--served-model=foo"], "--served-model-name", VLLM) == "foo"
    assert flag_value(["--block", "64"], "--block-size", VLLM) == "64"
    assert flag_value(["--block-sizes=64"], "--block-size", VLLM) is None  # no abbreviation: a longer name


def test_spelled_out_writes_abbreviated_names_in_full_and_keeps_the_rest():
    from tpu_stacks.serving.engine_flags import spelled_out

    args = ["--tensor-parallel=2", "--pipeline", "2", "-tp", "4", "--enforce-eager", "--tensor_parallel_size=8"]
    assert spelled_out(args, VLLM, known=("--pipeline-parallel-size",)) == [
        "--tensor-parallel-size=2",
        "--pipeline-parallel-size",
        "2",
        "-tp",
        "4",
        "--enforce-eager",
        "--tensor_parallel_size=8",  # an underscore spelling the patterns read themselves
    ]
