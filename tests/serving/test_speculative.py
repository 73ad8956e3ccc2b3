"""vLLM 0.29.0's speculative decoding read from a server's arguments, and what it does to async scheduling (ledger:
vllm.flag.speculative-config, vllm.flag.speculative-config-short, vllm.speculative.config-json, vllm.args.json-none,
vllm.args.json-refused, vllm.args.dotted-json, vllm.flag.spec-method, vllm.flag.spec-model, vllm.flag.spec-tokens,
vllm.speculative.spec-flags-exclusive, vllm.speculative.keys-dashes, vllm.speculative.custom-class-path,
vllm.speculative.ngram-model, vllm.speculative.method-default, vllm.speculative.mtp-renamed,
vllm.speculative.detect-eagle, vllm.speculative.detect-eagle3, vllm.speculative.detect-dflash,
vllm.speculative.detect-dspark, vllm.speculative.async-method.eagle, vllm.speculative.async-method.eagle3,
vllm.speculative.async-method.extract-hidden-states, vllm.speculative.async-method.mtp,
vllm.speculative.async-method.dflash, vllm.speculative.async-method.ngram-gpu, vllm.speculative.async-method.dspark,
vllm.speculative.async-method.draft-model, vllm.speculative.method.ngram, vllm.speculative.method.medusa,
vllm.speculative.method.mlp-speculator, vllm.speculative.method.suffix, vllm.speculative.method.custom-class,
vllm.async-scheduling.speculative-off, vllm.async-scheduling.speculative-refused,
vllm.async-scheduling.padded-drafter-refused, vllm.async-scheduling.padded-drafter-off,
vllm.speculative.padded-drafter-default, vllm.speculative.mtp-name.deepseek-mtp, vllm.speculative.method-validated,
vllm.config.pydantic-dataclass, vllm.speculative.use-eagle.eagle, vllm.speculative.use-eagle.eagle3,
vllm.speculative.use-eagle.mtp, vllm.speculative.use-eagle.dflash, vllm.speculative.use-eagle.dspark,
tpu-inference.speculative.runner-ngram, tpu-inference.speculative.runner-dflash, tpu-inference.speculative.runner-eagle,
tpu-inference.speculative.runner-refuses, tpu-inference.speculative.async-eagle-only,
tpu-inference.speculative.dflash-async): the plan and the policy pack read it with one function; what vLLM or its TPU
backend refuses at start is refused at plan time."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.policies.test_engine_args import template
from tests.policies.test_fit_raw import VLLM_IMAGE
from tests.slo.test_plan import expected, one_line, vllm
from tpu_policies.slo import async_scheduling as pack_async_scheduling
from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.errors import UserError
from tpu_stacks.serving.speculative import async_scheduling, speculation
from tpu_stacks.serving.speculative_methods import ASYNC_METHODS, MTP_NAMES, SYNC_METHODS, TPU_METHODS

NGRAM = '--speculative-config={"method": "ngram", "num_speculative_tokens": 4}'
EAGLE = '--speculative-config={"method": "eagle3", "model": "my/draft", "num_speculative_tokens": 2}'


def test_the_method_sets_are_vllms():
    """Methods that keep async scheduling (EagleModelTypes with MTP and DFlash, ngram_gpu, draft_model, dspark) and
    the rest of SpeculativeMethod, from the ledger's rows."""
    assert ASYNC_METHODS == {
        "eagle",
        "eagle3",
        "extract_hidden_states",
        "mtp",
        "dflash",
        "ngram_gpu",
        "dspark",
        "draft_model",
    }
    assert SYNC_METHODS == {"ngram", "medusa", "mlp_speculator", "suffix", "custom_class"}


def test_the_names_vllm_renames_mtp_and_the_methods_tpu_inference_runs():
    """MTPModelTypes but `mtp` (26 names at 0.29.0); the runner's ngram, dflash and use_eagle() methods."""
    assert len(MTP_NAMES) == 26 and {"deepseek_mtp", "qwen3_next_mtp", "glm5_next_mtp"} <= MTP_NAMES
    assert "mtp" not in MTP_NAMES and not MTP_NAMES & (ASYNC_METHODS | SYNC_METHODS)
    assert TPU_METHODS == {"ngram", "dflash", "eagle", "eagle3", "mtp", "dspark"}


@pytest.mark.parametrize(
    ("args", "method"),
    [
        ([NGRAM], "ngram"),
        (["--speculative-config", '{"method": "ngram", "num_speculative_tokens": 4}'], "ngram"),
        (["-sc", '{"model": "[ngram]", "num_speculative_tokens": 4}'], "ngram"),  # the model names the method
        (['--speculative-config={"model": "yuhuili/EAGLE-LLaMA3-Instruct-8B"}'], "eagle"),  # detected by name
        (['--speculative-config={"method": "draft_model", "model": "AngelSlim/Qwen3-8B_eagle3"}'], "eagle3"),
        (['--speculative-config={"method": "medusa", "model": "z-lab/Qwen3-8B-DFlash-b16"}'], "dflash"),
        ([EAGLE, "--speculative-config.method=ngram"], "ngram"),  # the dotted dict replaces the JSON
        (["--spec-method", "ngram", "--spec-tokens", "4"], "ngram"),
        (['--speculative-config={"method": "deepseek_mtp", "num_speculative_tokens": 1}'], "mtp"),  # renamed mtp
        (["--speculative-config.method", "qwen3_next_mtp", "--speculative-config.num_speculative_tokens", "2"], "mtp"),
        (['--speculative-config={"method": "glm4_moe_mtp", "model": "yuhuili/EAGLE-x"}'], "eagle"),  # then detected
    ],
)
def test_the_method_vllm_runs(args, method):
    found = speculation(args, VLLM, "vllm")
    assert found is not None and found.method == method


@pytest.mark.parametrize("args", [[], ["--speculative-config="], ["--speculative-config", "None"], [NGRAM, "-sc="]])
def test_no_speculative_config(args):
    assert speculation(args, VLLM, "vllm") is None


@pytest.mark.parametrize(
    ("args", "expected_async"),
    [
        ([], None),
        ([NGRAM], False),  # unset: vLLM turns it off
        ([EAGLE], None),  # unset: vLLM's default (on)
        ([EAGLE, "--async-scheduling"], True),
        ([NGRAM, "--no-async-scheduling"], False),
        (['--speculative-config={"method": "eagle", "model": "m/d", "disable_padded_drafter_batch": true}'], False),
        (["--spec-method", "mtp", "--spec-tokens", "1"], None),
        (["--spec-method", "deepseek_mtp", "--spec-tokens", "1"], None),  # mtp: async stays on
        (['--speculative-config={"method": "dflash", "model": "z-lab/Qwen3-8B-DFlash-b16"}'], None),  # on: it runs
        (['-sc={"method": "dflash", "model": "m/d"}', "--async-scheduling"], True),
        (['-sc={"method": "dflash", "model": "m/d"}', "--no-async-scheduling"], False),
    ],
)
def test_async_scheduling_as_vllm_decides_it(args, expected_async):
    assert async_scheduling(args, VLLM, "vllm") is expected_async


def test_an_ngram_stack_is_predicted_without_async_scheduling():
    """ngram speculative decoding: vLLM schedules one step at a time, so the plan's TTFT is the
    `--no-async-scheduling` one (the request no longer waits a queued step), throughput unchanged."""
    target = {"outputTokensPerSecond": 3000}
    default, off = vllm(slo=target), vllm(slo=target, extraArgs=["--no-async-scheduling"])
    ngram = vllm(slo=target, extraArgs=[NGRAM])
    assert ngram.slo.replica_ttft_ms == off.slo.replica_ttft_ms < default.slo.replica_ttft_ms
    assert ngram.slo.replica_ttft_p99_ms == off.slo.replica_ttft_p99_ms < default.slo.replica_ttft_p99_ms
    answer = expected(ngram, "vllm", 128, ngram.spec.max_num_batched_tokens, False, output_tokens_per_second=3000)
    assert answer.per_replica.ttft_ms == pytest.approx(ngram.slo.replica_ttft_ms)
    assert NGRAM in ngram.engine_args()


def test_an_eagle_stack_keeps_async_scheduling():
    target = {"outputTokensPerSecond": 3000}
    assert vllm(slo=target, extraArgs=[EAGLE]).slo.replica_ttft_ms == vllm(slo=target).slo.replica_ttft_ms


def test_async_scheduling_with_ngram_is_refused_in_one_line():
    with pytest.raises(UserError) as error:
        vllm(extraArgs=["--async-scheduling", NGRAM])
    assert one_line(error) == (
        'vllm.extraArgs[1]: \'--speculative-config={"method": "ngram", "num_speculative_tokens": 4}\' configures '
        "the speculative method ngram, with which vLLM refuses --async-scheduling at start; leave out "
        "--async-scheduling (vLLM then schedules synchronously), or use a method among dflash, dspark, eagle, eagle3, "
        "mtp"
    )


def test_async_scheduling_with_padded_drafter_off_is_refused():
    padded = '--speculative-config={"method": "eagle", "model": "m/d", "disable_padded_drafter_batch": true}'
    with pytest.raises(UserError, match=r"^vllm.extraArgs\[0\]: .* configures disable_padded_drafter_batch"):
        vllm(extraArgs=[padded, "--async-scheduling"])


def test_malformed_json_is_refused_in_one_line():
    with pytest.raises(UserError) as error:
        vllm(extraArgs=["--max-model-len=4096", "--speculative-config={method: ngram}"])
    assert one_line(error) == (
        "vllm.extraArgs[1]: '--speculative-config={method: ngram}' gives --speculative-config a value that is not "
        'JSON, which vLLM refuses at start; write --speculative-config=\'{"method": "...", '
        '"num_speculative_tokens": N}\''
    )


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (['--speculative-config={"method": "[ngram]"}'], "names the speculative method '\\[ngram\\]'"),
        (["--speculative-config=[1]"], "JSON that is not an object"),
        (['--speculative-config={"method": ["mtp"]}'], "names the speculative method \"\\['mtp'\\]\""),
        ([NGRAM, "--spec-tokens", "2"], "sets num_speculative_tokens, which --speculative-config also sets"),
    ],
)
def test_other_configurations_vllm_refuses(args, problem):
    with pytest.raises(UserError, match=problem):
        async_scheduling(args, VLLM, "vllm")


def test_the_pack_reads_a_servers_speculative_config_the_same_way():
    """A container argument holding JSON with spaces is one argv entry (no shell)."""
    deployment = SimpleNamespace(type="kubernetes:apps/v1:Deployment", props={})
    read = [
        pack_async_scheduling(template(VLLM_IMAGE, args), deployment)
        for args in (
            [NGRAM],
            [EAGLE],
            [],
            [NGRAM, "--no-async-scheduling"],
            ["--speculative-config", '{"method": "deepseek_mtp", "num_speculative_tokens": 1}'],
            [NGRAM, "--async-scheduling"],
            ["--speculative-config", '{"method": "suffix"}'],
            ["--speculative-config", '{"model": "Qwen/Qwen3-0.6B"}', "--no-async-scheduling"],
        )
    ]
    # the last three stop at start (vLLM refuses the third to last, tpu-inference the others): read as none, the
    # switch as given; not the capacity rule's to say
    assert read == [False, None, None, False, None, True, None, False]


def test_a_method_vllm_does_not_know_is_refused_in_one_line():
    """pydantic validates the method against SpeculativeMethod before vLLM reads it: the server does not start."""
    with pytest.raises(UserError) as error:
        vllm(extraArgs=["--spec-method", "eagle4", "--spec-model", "m/d"])
    assert one_line(error) == (
        "vllm.extraArgs[0]: '--spec-method eagle4' names the speculative method 'eagle4', which vLLM refuses at start (not "
        "one of its methods); write one of dflash, dspark, eagle, eagle3, mtp, ngram (a model's own MTP method name, "
        "e.g. deepseek_mtp, is also read, as mtp)"
    )


def test_a_draft_model_without_a_method_is_refused_in_one_line():
    """vLLM's default method for a draft model, draft_model, has no drafter in tpu-inference's TPU runner."""
    with pytest.raises(UserError) as error:
        vllm(extraArgs=['--speculative-config={"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}'])
    assert one_line(error) == (
        'vllm.extraArgs[0]: \'--speculative-config={"model": "Qwen/Qwen3-0.6B", "num_speculative_tokens": 4}\' '
        "configures the speculative method draft_model (vLLM's method for a draft model given without one), which "
        "tpu-inference (vLLM's TPU backend) does not run: the server stops at start; write a method among dflash, "
        "dspark, eagle, eagle3, mtp, ngram"
    )


@pytest.mark.parametrize(
    ("args", "method"),
    [
        (['-sc={"method": "draft_model", "model": "Qwen/Qwen3-0.6B"}'], "draft_model"),
        (['--speculative-config={"model": "my_pkg.MyProposer"}'], "custom_class"),
        (['--speculative-config={"method": "medusa", "model": "x/medusa"}'], "medusa"),
        (['--speculative-config={"method": "mlp_speculator", "model": "x/speculator"}'], "mlp_speculator"),
        (["--speculative-config.method", "suffix"], "suffix"),
        (['--speculative-config={"method": "ngram_gpu", "num_speculative_tokens": 4}'], "ngram_gpu"),
        (['--speculative-config={"method": "extract_hidden_states"}'], "extract_hidden_states"),
    ],
)
def test_a_method_tpu_inference_does_not_run_is_refused(args, method):
    with pytest.raises(UserError, match=rf"configures the speculative method {method}\b.*does not run"):
        async_scheduling(args, VLLM, "vllm")
    assert speculation(args, VLLM) is None  # the pack reads it as none


def _refused(args: list[str]) -> str:
    with pytest.raises(UserError) as error:
        async_scheduling(args, VLLM, "vllm")
    return one_line(error)


def test_dotted_keys_nest_and_merge_as_vllm_builds_them():
    """`--speculative-config.a.b v` is {"a": {"b": v}} in vLLM (ledger: vllm.args.dotted-json); each value read as
    JSON, else as text; several under one flag merged, a later value replacing an earlier."""
    flat = speculation(["--speculative-config.method=ngram", "--speculative-config.num_speculative_tokens=4"], VLLM)
    assert flat is not None and flat.method == "ngram"
    quoted = speculation(['--speculative-config.method="ngram"'], VLLM)  # JSON text: the string ngram
    assert quoted is not None and quoted.method == "ngram"
    # a key nested under another is not the method: the model `ngram` decides (vLLM: {"extra": {"method": ...}})
    nested = speculation(["--speculative-config.model=ngram", "--speculative-config.extra.method=medusa"], VLLM)
    assert nested is not None and nested.method == "ngram"
    # the method nested one deeper is a dict, which vLLM's validation refuses
    assert "names the speculative method \"{'sub': 'ngram'}\"" in _refused(["--speculative-config.method.sub=ngram"])
    replaced = speculation(["--speculative-config.method=medusa", "--speculative-config.method=ngram"], VLLM)
    assert replaced is not None and replaced.method == "ngram"


def test_dotted_keys_under_the_short_flag_are_another_json_value_the_later_wins():
    """vLLM adds each flag's dotted keys back as one JSON value per flag, in the order the flags first appear:
    argparse keeps the last."""
    args = ["-sc.method=medusa", "--speculative-config.method=ngram", "-sc.num_speculative_tokens=2"]
    found = speculation(args, VLLM)
    assert found is not None and found.method == "ngram"
    assert "method medusa" in _refused(["--speculative-config.method=ngram", "-sc.method=medusa"])


def test_a_refusal_names_the_argument_that_writes_the_method():
    args = ["--speculative-config.method=medusa", "--speculative-config.num_speculative_tokens=2"]
    assert _refused(args).startswith("vllm.extraArgs[0]: '--speculative-config.method=medusa' configures")
    # a method vLLM chose for the model given: the last argument of the configuration is named
    args = ['--speculative-config={"model": "org/draft"}', "--spec-tokens=3"]
    assert _refused(args).startswith(
        "vllm.extraArgs[1]: '--spec-tokens=3' configures the speculative method draft_model"
    )


@pytest.mark.parametrize(
    ("model", "method"),
    [
        ("my_pkg.proposers.Proposer", "custom_class"),  # an import path: vLLM loads the proposer class
        ("Proposer", "draft_model"),  # one name is a model, not an import path
        ("my-pkg.Proposer", "draft_model"),  # not identifiers
        ("org/draft.v1", "draft_model"),  # a Hugging Face repository
        ("https://example.com/x.y", "draft_model"),
    ],
)
def test_a_model_named_by_an_import_path_is_a_custom_class(model, method):
    """vLLM's rule (ledger: vllm.speculative.custom-class-path): two or more dotted identifiers, no scheme or slash."""
    assert f"the speculative method {method} " in _refused([f'--speculative-config={{"model": "{model}"}}'])


@pytest.mark.parametrize(
    "args",
    [
        ["--spec-method", "ngram", "--spec-tokens", "3", "--spec-tokens", "4"],  # argparse keeps a flag's last value
        ["--spec-method", "medusa", "--spec-method", "ngram", "--spec-tokens", "4"],
        # the JSON's key as written is not the flag's (vLLM compares before it reads dashes as underscores)
        ['--speculative-config={"method": "ngram", "num-speculative-tokens": 3}', "--spec-tokens", "4"],
    ],
)
def test_what_vllm_starts_with_is_not_refused(args):
    found = speculation(args, VLLM, "vllm")
    assert found is not None and found.method == "ngram"
    assert async_scheduling(args, VLLM, "vllm") is False


def test_json_null_is_no_speculative_config():
    assert speculation(["--speculative-config", "null"], VLLM, "vllm") is None
    assert async_scheduling(["--speculative-config=null", "--async-scheduling"], VLLM, "vllm") is True


@pytest.mark.parametrize("value", ["1", '"yes"', '"On"', "true", '"t"'])
def test_padded_drafter_off_as_pydantic_reads_a_bool(value):
    """vLLM's config is a pydantic dataclass in lax mode: 1, "yes", "on"... are true (ledger:
    vllm.config.pydantic-dataclass)."""
    config = f'--speculative-config={{"method": "eagle3", "model": "x/draft", "disable_padded_drafter_batch": {value}}}'
    assert async_scheduling([config], VLLM, "vllm") is False
    assert "disable_padded_drafter_batch" in _refused([config, "--async-scheduling"])


@pytest.mark.parametrize("value", ["0", '"no"', "false", '"maybe"'])
def test_padded_drafter_left_on(value):
    config = f'--speculative-config={{"method": "eagle3", "model": "x/draft", "disable_padded_drafter_batch": {value}}}'
    assert async_scheduling([config], VLLM, "vllm") is None


def test_the_pack_never_raises_on_json_too_deep_to_read():
    deep = "--speculative-config=" + "[" * 100_000
    assert speculation([deep], VLLM) is None
    with pytest.raises(UserError, match="not JSON"):
        speculation([deep], VLLM, "vllm")
