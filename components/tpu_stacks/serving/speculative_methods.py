"""vLLM 0.29.0's speculative method names, and which of them its TPU backend runs: each name read from its ledger row,
so serving/speculative.py decides with names typed nowhere else.

Why a module of its own: the names are upstream facts that move with the pins (a new model-specific MTP name, a
method tpu-inference learns to run); serving/speculative.py reads the arguments and decides with these sets.
"""

from __future__ import annotations

from tpu_stacks.catalog.upstream import text

ASYNC_METHODS = frozenset(
    {
        text("vllm.speculative.async-method.eagle"),
        text("vllm.speculative.async-method.eagle3"),
        text("vllm.speculative.async-method.extract-hidden-states"),
        text("vllm.speculative.async-method.mtp"),
        text("vllm.speculative.async-method.dflash"),
        text("vllm.speculative.async-method.ngram-gpu"),
        text("vllm.speculative.async-method.dspark"),
        text("vllm.speculative.async-method.draft-model"),
    }
)
"""Methods with which vLLM schedules asynchronously (and accepts `--async-scheduling`)."""
SYNC_METHODS = frozenset(
    {
        text("vllm.speculative.method.ngram"),
        text("vllm.speculative.method.medusa"),
        text("vllm.speculative.method.mlp-speculator"),
        text("vllm.speculative.method.suffix"),
        text("vllm.speculative.method.custom-class"),
    }
)
"""The rest of vLLM's speculative methods: async scheduling off, `--async-scheduling` refused."""
MTP_NAMES = frozenset(
    {
        text("vllm.speculative.mtp-name.deepseek-mtp"),
        text("vllm.speculative.mtp-name.dots3-note-mtp"),
        text("vllm.speculative.mtp-name.mimo-mtp"),
        text("vllm.speculative.mtp-name.mimo-v2-mtp"),
        text("vllm.speculative.mtp-name.glm4-moe-mtp"),
        text("vllm.speculative.mtp-name.glm4-moe-lite-mtp"),
        text("vllm.speculative.mtp-name.glm-ocr-mtp"),
        text("vllm.speculative.mtp-name.ernie-mtp"),
        text("vllm.speculative.mtp-name.nemotron-h-mtp"),
        text("vllm.speculative.mtp-name.exaone-moe-mtp"),
        text("vllm.speculative.mtp-name.exaone4-5-mtp"),
        text("vllm.speculative.mtp-name.qwen3-next-mtp"),
        text("vllm.speculative.mtp-name.qwen4-exp-mtp"),
        text("vllm.speculative.mtp-name.qwen3-5-mtp"),
        text("vllm.speculative.mtp-name.longcat-flash-mtp"),
        text("vllm.speculative.mtp-name.bailing-hybrid-v3-mtp"),
        text("vllm.speculative.mtp-name.minimax-m3-mtp"),
        text("vllm.speculative.mtp-name.bailing-hybrid-mtp"),
        text("vllm.speculative.mtp-name.kimi-k3-mtp"),
        text("vllm.speculative.mtp-name.pangu-ultra-moe-mtp"),
        text("vllm.speculative.mtp-name.step3p5-mtp"),
        text("vllm.speculative.mtp-name.hy-v3-mtp"),
        text("vllm.speculative.mtp-name.hy-v4-mtp"),
        text("vllm.speculative.mtp-name.gemma4-mtp"),
        text("vllm.speculative.mtp-name.inkling-mtp"),
        text("vllm.speculative.mtp-name.glm5-next-mtp"),
    }
)
"""Model-specific MTP names (MTPModelTypes but `mtp`): vLLM accepts each and runs it as mtp."""
TPU_METHODS = frozenset(
    {
        text("tpu-inference.speculative.runner-ngram"),
        text("tpu-inference.speculative.runner-dflash"),
        # what vLLM's use_eagle() holds, which the runner gives its EAGLE proposer (ledger:
        # tpu-inference.speculative.runner-eagle)
        text("vllm.speculative.use-eagle.eagle"),
        text("vllm.speculative.use-eagle.eagle3"),
        text("vllm.speculative.use-eagle.mtp"),
        text("vllm.speculative.use-eagle.dflash"),
        text("vllm.speculative.use-eagle.dspark"),
    }
)
"""The methods tpu-inference 0.29.0's TPU runner builds a drafter for; any other stops the server at start."""
NGRAM = text("vllm.speculative.method.ngram")
DRAFT_MODEL = text("vllm.speculative.method-default")
MTP = text("vllm.speculative.mtp-renamed")
CUSTOM_CLASS = text("vllm.speculative.method.custom-class")
DETECTED = {
    text("vllm.speculative.detect-eagle"): text("vllm.speculative.async-method.eagle"),
    text("vllm.speculative.detect-eagle3"): text("vllm.speculative.async-method.eagle3"),
    text("vllm.speculative.detect-dflash"): text("vllm.speculative.async-method.dflash"),
    text("vllm.speculative.detect-dspark"): text("vllm.speculative.async-method.dspark"),
}
"""A draft model's name part and the method vLLM then runs (the first that matches)."""
REDETECTED = frozenset(
    {DRAFT_MODEL, MTP, text("vllm.speculative.method.medusa"), text("vllm.speculative.method.mlp-speculator")}
)
"""Methods vLLM detects again from a draft model given beside them."""
