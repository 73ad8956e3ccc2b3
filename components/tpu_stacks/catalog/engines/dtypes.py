"""How a paged-KV engine holds a model (`DtypeRule`): what its `--dtype`, `--kv-cache-dtype` and `--quantization`
values mean in the sizing's dtypes, and what `--dtype auto` serves for a given model.

Why here: the stack's plan (which leaves `--dtype` at `auto`) and the policy pack (which reads a hand-written
server's flags, policies/tpu_policies/engine_args.py) must size the same bytes, and the engines differ: vLLM's
`auto` serves an fp32 checkpoint in bf16, SGLang-JAX's keeps it in fp32. Each engine declares its rule once (vLLM's
in catalog/engines/vllm.py, a workload folder's on its EngineDeclaration) and both read it through
`catalog.engines.dtype_rule` (the package, which knows both; this module imports neither).
Pure data: no provider SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tpu_stacks.catalog.model_shape import Dtype, ModelArchitecture

AUTO = "auto"
QUANTIZED_WEIGHTS = ("int8", "fp8", "int4")
"""Weight dtypes of a quantized model: its KV cache at `auto` stays in the activations' bf16."""


@dataclass(frozen=True)
class DtypeRule:
    """One engine's dtype flags as the memory model reads them."""

    weights: Mapping[str, Dtype]
    """`--dtype` values other than `auto` and the dtype each holds the weights in. Spelled exactly: both engines'
    argparse `choices` match case and all (`--dtype BFloat16` stops the server at start)."""
    kv: Mapping[str, Dtype | None]
    """`--kv-cache-dtype` values; None: the model's dtype (`auto`)."""
    quantization: Mapping[str, Dtype]
    """`--quantization` methods whose weight size the memory model knows; any other is advisory."""
    auto: Callable[[ModelArchitecture], Dtype]
    """What `--dtype auto` (the engine's default, which the stacks keep) holds a model's weights in."""
    source: str

    def weight(self, value: str, model: ModelArchitecture) -> Dtype | None:
        """The weights' dtype at `--dtype value`; None for a value the engine or the memory model does not know."""
        return self.auto(model) if value == AUTO else self.weights.get(value)

    def kv_cache(self, value: str, weight: Dtype) -> Dtype | None:
        """The KV cache's dtype at `--kv-cache-dtype value` beside weights in `weight`; None for an unknown value."""
        if value not in self.kv:
            return None
        return self.kv[value] or ("bf16" if weight in QUANTIZED_WEIGHTS else weight)
