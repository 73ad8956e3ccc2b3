"""The precise prefix-cache path of `vllm.gateway`: the servers publish their KV-cache events, llm-d's router indexes
them, and a render sidecar in the picker's pod gives the router the servers' own tokens. Pure decisions (no
provider SDK): the block size the servers use, their `--kv-events-config`, the sidecar's image and command.

Why each piece (docs/gateway.md, "Cache-aware routing from the engine's events", has the source lines):

- The block size. The router hashes prompts and events into blocks of `blockSizeTokens`, 16 unless told (ledger:
  router.kvblock.default-block-size); tpu-inference picks its own page size unless `--block-size` is given (ledger:
  tpu-inference.page-size.user-given): 16 above 8192 tokens of max-model-len, else a sixteenth of max-model-len
  rounded up to a power of two within 16..256, raised to what the block tables need to fit SMEM (ledger:
  tpu-inference.page-size.long-context, tpu-inference.page-size.sixteenth, tpu-inference.page-size.floor,
  tpu-inference.page-size.ceiling, tpu-inference.page-size.smem-pages, tpu-inference.page-size.smem-raise).
  `server_block_size` repeats that choice, so the router's blocks are the server's: one engine block, one index
  key. The router would map a mismatch (ledger: router.precise.block-size-need-not-match), but its index would then
  claim matches at a finer grain than the server caches. The servers' own choice is kept (no `--block-size` is
  added), so their paging does not change; an MLA model (1024-token pages, ledger: tpu-inference.page-size.mla) is
  not told apart by the catalogue, and there the mapping above is what keeps routing right.
- The hash seed. The router computes both the prompt's and the event's block keys itself, from tokens, with its own
  FNV seed (ledger: router.kvblock.hash-seed-router-side): vLLM's PYTHONHASHSEED and prefix_caching_hash_algo never
  enter them, so the servers need neither.
- The topic. vLLM publishes with an empty topic unless told (ledger: vllm.kv-events.topic-default), sent as the
  first ZMQ frame (ledger: vllm.kv-events.topic-frame); the router subscribes to `kv@` (ledger:
  router.kv-events.topic-filter) and reads `kv@<pod>@<model>` (ledger: router.kv-events.topic-format,
  router.kv-events.model-from-topic). The model part is hashed into every event's keys (ledger:
  router.kv-events.keys-hash-model) and a request's keys are hashed with the model it names (ledger:
  router.precise.lookup-model), so it is the served model's name. The pod part is not read: each per-server
  subscriber names its stream by the endpoint it dialled.
- The endpoint: vLLM binds `tcp://*:5557` (ledger: vllm.kv-events.endpoint) and the router dials each pool
  endpoint there (ledger: router.kv-events-port, router.kv-events.per-endpoint-port).
- The render sidecar. The router's vLLM token producer calls `/v1/completions/render` with no credentials and has
  no setting for any (ledger: router.render-no-auth, router.token-producer.vllm-fields), and the servers' API key
  guards /v1. So the picker renders locally, as the router's chart does: `vllm launch render <model>` (ledger:
  vllm.launch-render, router.chart.render-command) in vLLM's CPU image at the chart's pin (ledger:
  router.chart.render-registry, router.chart.render-repository, router.chart.render-tag) on the port the token
  producer calls by default (ledger: router.chart.render-port, router.token-producer.default-url). It loads what the
  servers' `--model` loads, not the served name: the positional model is what it fetches (ledger:
  vllm.launch-render.model-tag), and the token producer stamps its `modelName` into every render request, which the
  renderer refuses unless it is one of its served names (`--served-model-name`, else the model itself; ledger:
  vllm.launch-render.served-names, vllm.render.check-model). So `modelName` is the servers' served name and the
  sidecar is told it with `--served-model-name` when it differs; the servers' tokenizer choices in `extraArgs`
  (`TOKENIZER_FLAGS`, ledger: vllm.flag.tokenizer, vllm.flag.tokenizer-mode, vllm.flag.revision,
  vllm.flag.tokenizer-revision, vllm.flag.trust-remote-code) are passed on, so both tokenize alike.
- Prefix caching. The engine emits block events only for blocks it caches: with prefix caching off the index stays
  empty and vLLM only warns (ledger: vllm.kv-events.needs-prefix-caching), so `--no-enable-prefix-caching` is
  refused here.
"""

from __future__ import annotations

import json
from typing import Literal

from tpu_stacks.catalog.engines.vllm import VLLM
from tpu_stacks.catalog.kv_pages import tpu_page_size
from tpu_stacks.catalog.pickers import DEFAULT_PICKER
from tpu_stacks.catalog.upstream import number, text
from tpu_stacks.errors import UserError
from tpu_stacks.serving.engine_flags import flag_value, switch_given
from tpu_stacks.vllm.spec import VllmSpec

PrefixCache = Literal["precise", "approximate"]
PRECISE: PrefixCache = "precise"
APPROXIMATE: PrefixCache = "approximate"

KV_EVENTS_PORT = number("router.kv-events-port")
"""Where each server publishes and the router dials: vLLM's default endpoint's port, the router's default too."""
KV_EVENTS_ENDPOINT = text("vllm.kv-events.endpoint")
"""vLLM's default publisher endpoint, on KV_EVENTS_PORT (tests/vllm/test_kv_events.py checks the two agree)."""
ROUTER_DEFAULT_BLOCK = number("router.kvblock.default-block-size")
RENDER_PORT = number("router.chart.render-port")
RENDER_IMAGE = (
    f"{text('router.chart.render-registry')}/{text('router.chart.render-repository')}:{text('router.chart.render-tag')}"
)
"""vLLM's CPU image at the router chart's pin, which renders prompts without an accelerator."""
RENDER_VLLM = text("router.chart.render-tag").removeprefix("v")
"""The vLLM release inside RENDER_IMAGE: the render rows of the upstream ledger are read in its wheel (pin
vllm-render), since the sidecar, not the servers' 0.29.0, answers the token producer."""
RENDER_CPU = "500m"
RENDER_MEMORY = "2Gi"
RENDER_MEMORY_LIMIT = "4Gi"
"""The chart asks 4 CPUs and 8Gi for the sidecar; it tokenizes one prompt per request and holds one tokenizer, and the
picker's pod must fit beside the system pods on an e2-standard-4 (vllm/gateway.py says why the picker asks 1 CPU).
Memory is capped, as the picker's is [I: not measured on a cluster]."""

PREFIX_CACHING = "--enable-prefix-caching"  # on by default
NO_PREFIX_CACHING = "--no-" + PREFIX_CACHING.removeprefix("--")
"""vLLM's negation of `--enable-prefix-caching` (an argparse BooleanOptionalAction)."""
TOKENIZER_FLAGS = (
    f"--{text('vllm.flag.tokenizer')}",
    f"--{text('vllm.flag.tokenizer-mode')}",
    f"--{text('vllm.flag.revision')}",
    f"--{text('vllm.flag.tokenizer-revision')}",
)
"""Valued flags of the servers' `extraArgs` that choose the tokenizer: the render sidecar gets them too."""
TRUST_REMOTE_CODE = f"--{text('vllm.flag.trust-remote-code')}"
FLAGS_WE_SET = ("--kv-events-config", "--data-parallel-size")
"""Flags the precise path cannot share with `extraArgs`: its own events config, and data parallelism, under which
tpu-inference runs one scheduler (and one publisher on the same endpoint) per rank (ledger:
tpu-inference.dp-scheduler-only-above-one)."""
SHORT = {"--data-parallel-size": ("-dp",)}  # ledger: vllm.flag.data-parallel-size


def server_block_size(max_model_len: int, max_num_seqs: int, extra_args: list[str]) -> int:
    """The block size the server runs with: `--block-size` from extraArgs when given (tpu-inference keeps it;
    ledger: vllm.flag.block-size), else the page size tpu-inference picks."""
    given = flag_value(extra_args, f"--{text('vllm.flag.block-size')}", VLLM)
    if given is None:
        return tpu_page_size(max_model_len, max_num_seqs)
    if not given.isdigit() or int(given) <= 0:
        raise UserError(
            "vllm.extraArgs",
            f"--block-size {given}",
            "is not a positive whole number of tokens",
            "give --block-size a positive integer, or remove it (tpu-inference picks the page size)",
        )
    return int(given)


def check_extra_args(extra_args: list[str]) -> None:
    """Refuse extraArgs the precise path would contradict, in one line naming the flag."""
    if switch_given(extra_args, PREFIX_CACHING, VLLM) is False:  # the last of the two switches, any spelling
        raise UserError(
            "vllm.extraArgs",
            NO_PREFIX_CACHING,
            "turns off the prefix cache whose block events vllm.gateway.prefixCache: precise indexes",
            f"remove {NO_PREFIX_CACHING} from vllm.extraArgs, or set vllm.gateway.prefixCache: approximate",
        )
    for flag in FLAGS_WE_SET:
        value = next((v for name in (flag, *SHORT.get(flag, ())) if (v := flag_value(extra_args, name, VLLM))), None)
        if value is not None and not (flag == "--data-parallel-size" and value == "1"):
            raise UserError(
                "vllm.extraArgs",
                f"{flag} {value}",
                "conflicts with vllm.gateway.prefixCache: precise, which sets the servers' KV events itself"
                if flag == "--kv-events-config"
                else "runs one KV-events publisher per data-parallel rank, which the precise path does not configure",
                f"remove {flag} from vllm.extraArgs, or set vllm.gateway.prefixCache: approximate",
            )


def topic(model: str) -> str:
    """`kv@<pod>@<model>`: the router's filter prefix, a pod part it does not read, the served model's name."""
    return f"{text('router.kv-events.topic-filter')}vllm@{model}"


def server_args(model: str) -> list[str]:
    """The servers' `--kv-events-config` (ledger: vllm.flag.kv-events-config): events on, ZMQ on vLLM's default
    endpoint, the topic the router reads."""
    config = {
        "enable_kv_cache_events": True,
        "publisher": "zmq",
        "endpoint": KV_EVENTS_ENDPOINT,
        "topic": topic(model),
    }
    return [f"--{text('vllm.flag.kv-events-config')}={json.dumps(config, separators=(',', ':'))}"]


def tokenizer_args(extra_args: list[str]) -> list[str]:
    """The servers' tokenizer choices in `extraArgs` (TOKENIZER_FLAGS, `--trust-remote-code`), for the sidecar."""
    given = [f"{flag}={value}" for flag in TOKENIZER_FLAGS if (value := flag_value(extra_args, flag, VLLM)) is not None]
    return [*given, *([TRUST_REMOTE_CODE] if switch_given(extra_args, TRUST_REMOTE_CODE, VLLM) else [])]


def render_command(
    model_id: str, served: str, tokenizer: list[str] | tuple[str, ...] = ()
) -> tuple[list[str], list[str]]:
    """The sidecar's command and arguments, as the router's chart runs it: the model the servers load (`model_id`),
    answering to their served name (`served`, the token producer's modelName; ledger: vllm.flag.served-model-name)
    and tokenizing as they do."""
    named = [] if served == model_id else [f"--{text('vllm.flag.served-model-name')}={served}"]
    return ["vllm", "launch", text("vllm.launch-render")], [model_id, *tokenizer, *named, f"--port={RENDER_PORT}"]


def prefix_cache(spec: VllmSpec) -> PrefixCache:
    """`vllm.gateway.prefixCache`, or its default: precise with llm-d's router (the server is always vLLM TPU
    here, which publishes KV events), approximate with the v1.5.0 picker (it has no precise producer)."""
    if spec.gateway.prefix_cache is not None:
        return spec.gateway.prefix_cache
    return PRECISE if (spec.gateway.picker or DEFAULT_PICKER) == DEFAULT_PICKER else APPROXIMATE


def check_prefix_cache(spec: VllmSpec) -> None:
    """`vllm.gateway.prefixCache: precise` needs llm-d's router and servers that publish events."""
    picker_name = spec.gateway.picker or DEFAULT_PICKER
    if spec.gateway.prefix_cache == PRECISE and picker_name != DEFAULT_PICKER:
        raise UserError(
            "vllm.gateway.prefixCache",
            PRECISE,
            f"needs llm-d's router: the {picker_name} picker has no precise-prefix-cache-producer",
            "remove vllm.gateway.picker (llm-d's router), or set vllm.gateway.prefixCache: approximate",
        )
    if prefix_cache(spec) == PRECISE:
        check_extra_args(spec.extra_args)
