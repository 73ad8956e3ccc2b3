"""`JetStreamStack`: JetStream PyTorch serving (the tutorial [D-GKE-JETSTREAM]).

Each workload package has the same files: `args.py` (typed inputs, the multi-language schema,
generated from the spec), `outputs.py` (typed outputs),
`spec.py` (the validated config and upstream facts), `plan.py` (every decision, pure: no provider
SDK), `component.py` (resources), and its own pieces. Importing the package loads no provider SDK;
`JetStreamStack` is loaded on first use.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "JetStreamStack":
        from tpu_stacks.jetstream.component import JetStreamStack

        return JetStreamStack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
