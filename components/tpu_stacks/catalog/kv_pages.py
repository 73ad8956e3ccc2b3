"""The KV page (block) size tpu-inference picks for a vLLM TPU server, as a pure function: the router's precise prefix
producer must hash prompts in the same blocks (vllm/kv_events.py), and the policy pack checks a hand-written picker
config against the servers it routes to (policies/tpu_policies/inference_pools.py). Pure: no provider SDK.

tpu-inference 0.29.0 chooses the page size unless `--block-size` is given (ledger: tpu-inference.page-size.user-given):
16 above 8192 tokens of max-model-len, else a sixteenth of max-model-len rounded up to a power of two within 16..256,
raised to what `max-num-seqs` sequences' block tables need to fit half the SMEM (ledger:
tpu-inference.page-size.long-context, tpu-inference.page-size.sixteenth, tpu-inference.page-size.floor,
tpu-inference.page-size.ceiling, tpu-inference.page-size.smem-pages, tpu-inference.page-size.smem-raise). MLA models
take 1024 (ledger: tpu-inference.page-size.mla), which this function does not model.
"""

from __future__ import annotations

from tpu_stacks.catalog.upstream import number

LONG_CONTEXT = number("tpu-inference.page-size.long-context")
PAGE_DIVISOR = number("tpu-inference.page-size.sixteenth")
PAGE_FLOOR = number("tpu-inference.page-size.floor")
PAGE_CEILING = number("tpu-inference.page-size.ceiling")
SMEM_BYTES = number("tpu-inference.page-size.smem-pages")
"""The SMEM the block tables may use half of (1 MB up to v6e, tpu-inference's comment above get_min_page_size)."""
BLOCK_TABLE_ENTRY_BYTES = 4
"""An int32 per page in the block tables (the `// 4` of flash_attn.py:113-114)."""


def _power_of_two_at_least(n: int) -> int:
    return 1 if n < 1 else 1 << (n - 1).bit_length()


def tpu_page_size(max_model_len: int, max_num_seqs: int) -> int:
    """The KV page size tpu-inference 0.29.0 picks for a (non-MLA) model when `--block-size` is not given."""
    if max_model_len > LONG_CONTEXT:
        page = PAGE_FLOOR
    else:
        page = min(max(_power_of_two_at_least(max_model_len) // PAGE_DIVISOR, PAGE_FLOOR), PAGE_CEILING)
    pages_per_request = SMEM_BYTES // 2 // max_num_seqs // BLOCK_TABLE_ENTRY_BYTES
    smem_floor = _power_of_two_at_least(-(-max_model_len // pages_per_request))
    return max(page, smem_floor)
