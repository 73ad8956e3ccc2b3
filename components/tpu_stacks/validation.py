"""Turn pydantic's validation errors into the project's one-line `UserError`."""

from __future__ import annotations

import difflib
import math
import typing
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from tpu_stacks.errors import MISSING, UserError

Model = TypeVar("Model", bound=BaseModel)


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


def _fix(error: dict[str, Any], model: type[BaseModel]) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(str(error["loc"][-1]), sorted(_field_names(model)), n=1)
        return f"did you mean '{close[0]}'?" if close else "remove it or check its spelling"
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
    return error["msg"].lower()


OUTSIDE_SECTION = ("cluster", "hf_token", "api_key_secret")
"""Keys of a workload component's args that its section spec does not declare (parsed elsewhere)."""


def parse_section(
    model: type[Model], args: dict[str, Any], section: str, outside: tuple[str, ...] = OUTSIDE_SECTION
) -> Model:
    """Validate a component's args as its section spec: every key but `outside` belongs to `model`, in
    either spelling (`max_model_len` from another language's SDK, `maxModelLen` from a stack file), so a
    misspelled key is refused with a did-you-mean rather than dropped."""
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


# --- Field rules every spec shares, applied in the spec phase (before any resource) ---------------------


class FieldProblem(ValueError):
    """A field validator's refusal: `parse` renders it as the field's one line (`KEY: VALUE problem; fix`)."""

    def __init__(self, problem: str, fix: str = "", where: str = "", value: Any = MISSING) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix
        self.where = where
        """The path below the field (`[1]`, `.fsdp`) when the problem is inside a list or mapping."""
        self.value = value
        """The bad item itself when it is inside a list or mapping."""

    def inside(self, step: str, item: Any) -> FieldProblem:
        return FieldProblem(self.problem, self.fix, step + self.where, item if self.value is MISSING else self.value)


LARGEST_NUMBER = 1_000_000_000
"""No count, length or size of these stacks comes near a billion: beyond it a number is a typo (`1e20`)."""


def _plain_types(annotation: Any) -> set[type]:
    """The plain types a field accepts (`int | None` -> {int, NoneType}); containers give their origin."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _plain_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return {t for arg in typing.get_args(annotation) for t in _plain_types(arg)}
    if origin is typing.Literal:
        return {type(value) for value in typing.get_args(annotation)}
    return {origin or annotation} if isinstance(origin or annotation, type) else set()


def _check_text(value: str) -> None:
    from tpu_stacks.errors import looks_secret

    if looks_secret(value):
        raise FieldProblem(
            "looks like a secret (a token or key) in plain config",
            "remove it; secrets go in tpu-stacks:hfToken or tpu-stacks:vllmApiKey with pulumi config set --secret",
        )
    for char in value:
        if ord(char) > 127:
            raise FieldProblem("has a character that is not ASCII", "type it again in plain ASCII")


def check_plain_values(value: Any, accepts: set[type], items: frozenset[type] = frozenset()) -> None:
    """What no field accepts: a boolean where a number belongs (YAML `yes` is no count), a number that is
    infinite, NaN or absurd, text where a boolean belongs (`on` is a string in YAML 1.2), a secret or an
    invisible or look-alike character in text (checked inside lists and mappings too)."""
    if isinstance(value, bool):
        if accepts and bool not in accepts and (int in accepts or float in accepts):
            raise FieldProblem("is a boolean, not a number", "give a number")
        return
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise FieldProblem("is not a finite number", "give a number")
        if abs(value) > LARGEST_NUMBER:
            raise FieldProblem(f"is beyond any sensible value (more than {LARGEST_NUMBER:,})", "give a sensible number")
        return
    if isinstance(value, str):
        if accepts == {bool} or accepts == {bool, type(None)}:
            raise FieldProblem("is text, not true or false (YAML 1.2 reads on/yes/no as text)", "write true or false")
        _check_text(value)
        return
    steps = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for step, item in steps:
        try:
            if isinstance(step, str):
                _check_text(step)
            check_plain_values(item, set(items))
        except FieldProblem as problem:
            raise problem.inside(f".{step}" if isinstance(step, str) else f"[{step}]", item) from None


def _item_types(annotation: Any) -> frozenset[type]:
    """The plain types of a list's items or a mapping's values (`dict[str, int]` -> {int})."""
    for arg in [annotation, *typing.get_args(annotation)]:
        origin = typing.get_origin(arg)
        if origin in (list, dict) and typing.get_args(arg):
            return frozenset(_plain_types(typing.get_args(arg)[-1]))
    return frozenset()


def _has_model(annotation: Any) -> bool:
    """Whether a field holds section models (their own validators check their fields, with exact keys)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_has_model(arg) for arg in typing.get_args(annotation))


class SpecModel(BaseModel):
    """The base of every section spec: unknown keys refused, both spellings, docstrings as descriptions,
    and `check_plain_values` on every field before its own validation."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, use_attribute_docstrings=True)

    @field_validator("*", mode="before")
    @classmethod
    def _plain_values(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is None or (_has_model(field.annotation) and isinstance(value, (dict, list))):
            return value
        check_plain_values(value, _plain_types(field.annotation), _item_types(field.annotation))
        return value


def _rule(check: Any) -> Any:
    """An AfterValidator that turns a NameRule-style check into a FieldProblem."""

    def validate(value: Any) -> Any:
        try:
            return check(value)
        except UserError as error:
            raise FieldProblem(error.problem, error.fix) from None

    return AfterValidator(validate)


def _k8s_name(value: str) -> str:
    from tpu_stacks.names import K8S_NAME

    return K8S_NAME.check("", value)


def _service_account_id(value: str) -> str:
    from tpu_stacks.names import SERVICE_ACCOUNT_ID

    return SERVICE_ACCOUNT_ID.check("", value)


def _quantity(value: str) -> str:
    from tpu_stacks.k8s_quantity import check_quantity

    return check_quantity(value)


def _bucket(value: str) -> str:
    from tpu_stacks.gcp.storage import check_bucket_name

    return check_bucket_name(value)


def _image_name(value: str) -> str:
    from tpu_stacks.gcp.registry import check_image_name

    return check_image_name(value)


def _secret_free_args(value: list[str]) -> list[str]:
    from tpu_stacks.errors import secret_key

    for index, arg in enumerate(value):
        flag = arg.split("=", 1)[0].lstrip("-")
        if arg.startswith("-") and secret_key(flag):
            raise FieldProblem(
                f"passes a secret flag ({arg.split('=', 1)[0]}) in plain config",
                "give the token as tpu-stacks:hfToken (or vllmApiKey) with pulumi config set --secret",
                where=f"[{index}]",
                value=arg,
            )
    return value


K8sName = Annotated[str, _rule(_k8s_name)]
"""A Kubernetes object name (DNS-1123 label): namespaces and ServiceAccounts."""
ServiceAccountId = Annotated[str, _rule(_service_account_id)]
"""An IAM service account id (6-30 characters)."""
Quantity = Annotated[str, _rule(_quantity)]
"""A positive Kubernetes quantity (`8`, `500m`, `64Gi`)."""
BucketName = Annotated[str, _rule(_bucket)]
"""A Cloud Storage bucket name, by Google's naming rules."""
ImageName = Annotated[str, _rule(_image_name)]
"""An image name (and optional tag) inside an Artifact Registry repository."""
EngineArgs = Annotated[list[str], _rule(_secret_free_args)]
"""Extra engine flags: never a secret (a token there is written into manifests and the plan)."""
