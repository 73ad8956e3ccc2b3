"""Turn pydantic's validation errors into the project's one-line `UserError`.

The rules every section spec shares (`SpecModel`, names, quantities, secrets) are in `field_rules`; their
`FieldProblem` becomes the field's line here, under the key as the user wrote it.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from tpu_stacks.errors import MISSING, UserError
from tpu_stacks.inputs.field_rules import FieldProblem

Model = TypeVar("Model", bound=BaseModel)
REQUIRED_BONUS = 0.1
"""How much closer a required key counts in a did-you-mean: enough to win a one-letter tie."""


def _key(prefix: str, location: tuple[Any, ...]) -> str:
    key = prefix
    for part in location:
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            key += f".{part}" if key else str(part)
    return key


def _field_names(model: type[BaseModel], seen: set[type] | None = None) -> set[str]:
    """Every field name and alias in a model tree, for 'did you mean' hints."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(field.alias or name)  # suggest the spelling the config uses (camelCase)
        for inner in [field.annotation, *typing.get_args(field.annotation)]:
            for candidate in [inner, *typing.get_args(inner)]:
                if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                    names |= _field_names(candidate, seen)
    return names


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The spec models a field's annotation holds (`X`, `X | None`, `list[X]`, `dict[str, X]`)."""
    found = []
    for inner in [annotation, *typing.get_args(annotation)]:
        for candidate in [inner, *typing.get_args(inner)]:
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                found.append(candidate)
    return found


def _section_at(model: type[BaseModel], location: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that holds the key at `location` (its parent's path), or None when the path leaves the tree."""
    for part in location:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if part in (n, f.alias)), None)
        inner = _models_in(field.annotation) if field is not None else []
        if not inner:
            return None
        model = inner[0]
    return model


def suggest(key: str, model: type[BaseModel], location: tuple[Any, ...] = ()) -> str | None:
    """The setting a misspelled `key` most likely meant: the section's required keys first (`modle` is the
    required `model`, not a nested `mode`), then the section's other keys, then any key of the tree."""
    section = _section_at(model, location)
    if section is not None:
        names = {f.alias or n: f.is_required() for n, f in section.model_fields.items()}
        close = difflib.get_close_matches(key, sorted(names), n=len(names))
        if close:  # a required key wins a near tie (`modle`: model 0.8 against mode 0.89), not a clear loss
            score = {
                name: difflib.SequenceMatcher(None, key, name).ratio() + REQUIRED_BONUS * names[name] for name in close
            }
            return max(close, key=score.__getitem__)
    close = difflib.get_close_matches(key, sorted(_field_names(model)), n=1)
    return close[0] if close else None


def _fix(error: dict[str, Any], model: type[BaseModel]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        close = suggest(str(error["loc"][-1]), model, tuple(error["loc"][:-1]))
        return f"did you mean '{close}'?" if close else "remove it or check its spelling"
    if kind == "missing":
        return "add it"
    if kind == "literal_error":
        return f"accepted: {error.get('ctx', {}).get('expected', '')}"
    if kind in ("model_type", "dict_type"):
        return "write it as a mapping of settings"
    if kind == "list_type":
        return "write it as a list"
    if kind == "string_type" and isinstance(error.get("input"), (int, float)) and not isinstance(error["input"], bool):
        if "version" in str(error["loc"][-1]).lower():
            return 'quote it in the stack file ("1.30"): YAML reads an unquoted 1.30 as the number 1.3'
        return "quote it in the stack file: YAML reads it as a number, and this setting is text"
    message = error["msg"]  # pydantic's sentence, joined after `; `: only its first letter lowered (keys keep case)
    return message[:1].lower() + message[1:]


def camel(name: str) -> str:
    """`hf_token` -> `hfToken`: a field's spelling in a stack file and in other languages' SDKs."""
    first, *rest = name.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def component_inputs(model: type[BaseModel], args: Mapping[str, Any]) -> dict[str, Any]:
    """A component's args with each of its own inputs (the spec's `INPUTS`: the cluster, the secrets) under
    its Python name, given in either spelling: `hfToken` is `hf_token`, as `maxModelLen` is `max_model_len`
    for the section's fields. Both spellings at once is a mistake (which one is meant?)."""
    if not isinstance(args, Mapping):
        raise UserError(
            "args", _shown(args), "is not a mapping of the component's inputs", "pass a dict (or the Args TypedDict)"
        )
    inputs = dict(args)
    for item in getattr(model, "INPUTS", ()):
        other = camel(item.name)
        if other == item.name or other not in inputs:
            continue
        if item.name in inputs:
            raise UserError(other, MISSING, f"is given twice, also as {item.name}", "give it once")
        inputs[item.name] = inputs.pop(other)
    return inputs


def parse_section(model: type[Model], args: Mapping[str, Any], section: str) -> Model:
    """Validate a component's args as its section spec: every key but the component's own inputs (the
    spec's `INPUTS`: the cluster and secrets, parsed elsewhere) belongs to `model`, in either spelling
    (`max_model_len` from another language's SDK, `maxModelLen` from a stack file), so a misspelled key,
    or a secret the component does not take, is refused with a did-you-mean rather than dropped."""
    outside = {name for item in getattr(model, "INPUTS", ()) for name in (item.name, camel(item.name))}
    return parse(model, {key: value for key, value in args.items() if key not in outside}, section)


def parse(model: type[Model], data: Any, prefix: str = "") -> Model:
    """Validate `data` as `model`; the first problem becomes a UserError naming its key."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        # A misspelled key explains a "missing" one: report unknown keys first.
        error = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")[0]
        key = _key(prefix, error["loc"])
        kind = error["type"]
        if kind == "extra_forbidden":
            raise UserError(key, error.get("input"), "is not a known setting", _fix(error, model)) from None
        if kind == "missing":
            raise UserError(key, MISSING, "is required", _fix(error, model)) from None
        problem = (error.get("ctx") or {}).get("error")
        if isinstance(problem, FieldProblem):
            value = error.get("input") if problem.value is MISSING else problem.value
            raise UserError(key + problem.where, value, problem.problem, problem.fix) from None
        raise UserError(key, error.get("input"), "is not accepted", _fix(error, model)) from None


def _shown(value: Any) -> Any:
    """A value for a message: the type's name for what is not plain data (an Output, an object)."""
    return value if isinstance(value, (str, int, float, bool, list, tuple)) or value is None else type(value).__name__


def cluster_of(args: Mapping[str, Any]) -> dict[str, Any]:
    """The component's `cluster` input as a mapping, or one line naming it (a missing cluster, or one given
    as a string or an Output: it sizes the pools at construction, so it must be plain data)."""
    if "cluster" not in args:
        raise UserError("cluster", MISSING, "is required", "pass cluster={'project': ..., 'location': ...}")
    cluster = args["cluster"]
    if not isinstance(cluster, Mapping):
        raise UserError(
            "cluster", _shown(cluster), "is not a mapping", "pass the cluster's settings as a plain dict, not an Output"
        )
    return dict(cluster)
