"""The scenario of every registered workload (tpu_stacks/registry.py): its section and secrets handed
to its component, its outputs exported. A workload's own folder says what each of these is."""

from __future__ import annotations

from typing import Any

import pulumi

from stacks.config import NAMESPACE, LoadedStack, Secrets
from tpu_stacks.errors import UserError
from tpu_stacks.registry import Export, Workload


def build(workload: Workload, stack: LoadedStack, secrets: Secrets) -> None:
    args = stack.component_args(**{name: secrets.get(key) for name, key in workload.secrets})
    if workload.prepare_args is not None:
        args = workload.prepare_args.load()(args)
    try:
        component = workload.component.load()(workload.name, args)
    except UserError as error:
        raise as_config_error(error, workload) from None
    for export in workload.exports:
        if export.optional and getattr(component, export.path.split(".")[0], None) is None:
            continue
        pulumi.export(export.name, exported(component, export))


def as_config_error(error: UserError, workload: Workload) -> UserError:
    """A component's refusal of a secret input (`hf_token`, named as a library user writes it) as the
    stack file's config key (`hfToken`) and the command that sets it; any other error as it is."""
    for name, key in workload.secrets:
        if error.key == name:
            fix = f"set it as a secret: pulumi config set --secret {NAMESPACE}:{key} <value>"
            return UserError(key, error.value, error.problem, fix)
    return error


def exported(component: Any, export: Export) -> Any:
    """The component's attribute at the export's path, or its one key of a map output."""
    value = component
    for part in export.path.split("."):
        value = getattr(value, part)
    if export.key is None:
        return value
    return value.apply(lambda values, key=export.key: values[key])
