"""vllm/kv_events.py's extraArgs checks at their edges, on plain argument lists (kv_events.py's mutation survivors):
`--block-size` must be a positive whole number of tokens (vLLM's `--block-size`, ledger: vllm.flag.block-size), and
data parallelism is refused only above one rank (tpu-inference runs one scheduler, so one KV-events publisher, per
rank only above one; ledger: tpu-inference.dp-scheduler-only-above-one)."""

from __future__ import annotations

import pytest

from tpu_stacks.errors import UserError
from tpu_stacks.vllm.kv_events import check_extra_args, server_block_size


def test_the_smallest_block_size_is_one_token():
    assert server_block_size(8192, 128, ["--block-size=1"]) == 1
    with pytest.raises(UserError, match=r"^vllm\.extraArgs: '--block-size 0' is not a positive whole number"):
        server_block_size(8192, 128, ["--block-size=0"])


def test_one_data_parallel_rank_is_no_data_parallelism():
    check_extra_args(["--data-parallel-size=1"])
    with pytest.raises(UserError, match=r"runs one KV-events publisher per data-parallel rank"):
        check_extra_args(["--data-parallel-size", "2"])


def test_a_kv_events_config_of_the_users_own_is_refused_as_a_conflict():
    with pytest.raises(UserError) as caught:
        check_extra_args(["--kv-events-config=1"])
    assert "conflicts with vllm.gateway.prefixCache: precise" in str(caught.value)


def test_each_spelling_vllm_reads_is_read():
    """vLLM's `-dp` (ledger: vllm.flag.data-parallel-size), its underscore spelling and its BooleanOptionalAction
    switches (ledger: vllm.args.boolean-switches): the last of `--enable-prefix-caching` and its `--no-` form wins."""
    with pytest.raises(UserError, match=r"runs one KV-events publisher per data-parallel rank"):
        check_extra_args(["-dp", "2"])
    with pytest.raises(UserError, match=r"turns off the prefix cache"):
        check_extra_args(["--no_enable_prefix_caching"])
    check_extra_args(["--no-enable-prefix-caching", "--enable-prefix-caching"])  # turned back on: the cache is kept
    from tpu_stacks.vllm.kv_events import tokenizer_args

    assert tokenizer_args(["--trust_remote_code"]) == ["--trust-remote-code"]
    assert tokenizer_args(["--trust-remote-code", "--no-trust-remote-code"]) == []
