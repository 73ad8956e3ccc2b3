"""`tpu_stacks.traffic`'s names are loaded on first use (PEP 562, traffic/__init__.py): each one it offers resolves
to the object its home module defines, and a name it does not offer is an AttributeError, as for any module."""

import importlib

import pytest

import tpu_stacks.traffic as traffic


@pytest.mark.parametrize("name", traffic.__all__)
def test_every_offered_name_is_its_home_modules_object(name):
    home = importlib.import_module(f"tpu_stacks.traffic.{traffic._HOMES[name]}")
    assert getattr(traffic, name) is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        traffic.no_such_name  # noqa: B018
