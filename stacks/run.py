"""Build the scenario named by `tpu-stacks:scenario`."""

from __future__ import annotations

from stacks.config import NAMESPACE, load
from stacks.scenarios import scenarios
from tpu_stacks.errors import UserError


def run() -> None:
    origins: dict[str, str] = {}
    try:
        found = scenarios()
        stack, secrets = load({name: scenario.section for name, scenario in found.items()})
        origins = stack.origins  # `cluster.location` that `gcp:zone` set is refused as `gcp:zone`
        found[stack.scenario].build(stack, secrets)
    except UserError as error:  # from the loader or a component, keyed by its config spelling
        error = error.rekeyed(origins)
        raise (error if error.key.startswith("gcp:") else error.in_namespace(NAMESPACE)) from None
