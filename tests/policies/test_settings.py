"""Policy settings declared as data (tpu_policies.settings): the schema follows from the default."""

import pytest

from tpu_policies import POLICIES
from tpu_policies.settings import Setting, config_schema


def test_the_json_type_follows_the_default():
    schema = config_schema(
        Setting("names", ("a",), "Names."),
        Setting("strict", False, "Strict."),
        Setting("margin", 0, "Minutes.", minimum=0),
        Setting("pattern", "x$", "A pattern."),
    ).properties
    assert schema == {
        "names": {"type": "array", "items": {"type": "string"}, "default": ["a"], "description": "Names."},
        "strict": {"type": "boolean", "default": False, "description": "Strict."},
        "margin": {"type": "integer", "minimum": 0, "default": 0, "description": "Minutes."},
        "pattern": {"type": "string", "default": "x$", "description": "A pattern."},
    }


def test_a_default_with_no_json_type_is_refused():
    with pytest.raises(TypeError, match="setting ratio"):
        Setting("ratio", 0.5, "A ratio.").schema()


class _Args:
    def __init__(self, config):
        self._config = config

    def get_config(self):
        return self._config


def test_read_gives_the_configured_value_else_the_default():
    setting = Setting("allowed", [], "Allowed.")
    assert setting.read(_Args({"allowed": ["x"]})) == ["x"]
    assert setting.read(_Args({})) == [] and setting.read(object()) == []


def test_every_configurable_policy_declares_its_settings_this_way():
    """Nine policies have settings; each schema is one a Setting builds (a typed default, a description)."""
    configurable = {p.name: p.config_schema.properties for p in POLICIES if p.config_schema}
    assert len(configurable) == 10
    for name, properties in configurable.items():
        for key, schema in properties.items():
            rebuilt = Setting(key, schema["default"], schema["description"], schema.get("minimum")).schema()
            assert schema == rebuilt, (name, key)
