"""`SaxmlStack`: Saxml serving on multi-host slices ([D-GKE-SAX], [D-S3NS-SAX]).

Each workload package has the same files: `args.py` (typed inputs, the multi-language schema,
generated from the spec), `outputs.py` (typed outputs),
`spec.py` (the validated config and upstream facts), `plan.py` (every decision, pure: no provider
SDK), `component.py` (resources), and its own pieces. Importing the package loads no provider SDK;
`SaxmlStack` is loaded on first use.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "SaxmlStack":
        from tpu_stacks.saxml.component import SaxmlStack

        return SaxmlStack
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
