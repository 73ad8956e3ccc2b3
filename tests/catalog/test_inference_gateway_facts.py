"""catalog/inference_gateway.py's facts and lookups against a second statement of each: the Cloud Armor limits as the
pinned provider SDK documents them (pulumi-gcp's own docstrings, from the provider schema), the picker's refusal in
its own serving API's words, and the collected tables answering as the module's names."""

import inspect
import re

import pulumi_gcp.compute as compute
import pytest

from tpu_stacks.catalog import inference_gateway
from tpu_stacks.catalog.inference_gateway import (
    ARMOR_DEFAULT_RULE_PRIORITY,
    ARMOR_RANGES_PER_RULE,
    SAX_HTTP_REPOSITORY,
    front_end,
    gateway_support,
    serving_api,
    serving_apis,
)


def test_a_cloud_armor_rule_takes_at_most_the_ranges_the_provider_documents():
    """pulumi-gcp's RegionSecurityPolicyRuleMatchConfigArgs.src_ip_ranges: "Maximum number of srcIpRanges allowed is
    10." (magic-modules RegionSecurityPolicy.yaml `max_size`)."""
    doc = compute.RegionSecurityPolicyRuleMatchConfigArgs.src_ip_ranges.__doc__
    assert int(re.search(r"Maximum number of srcIpRanges allowed is (\d+)", doc)[1]) == ARMOR_RANGES_PER_RULE


def test_the_default_rule_has_the_priority_the_provider_documents():
    """pulumi-gcp's RegionSecurityPolicyArgs `rules`: "There must always be a default rule (rule with priority
    2147483647 and match "*")", the largest 32-bit signed integer."""
    doc = inspect.getsource(compute.RegionSecurityPolicyArgs)
    assert int(re.search(r"default rule \(rule with priority (\d+)", doc)[1]) == ARMOR_DEFAULT_RULE_PRIORITY
    assert ARMOR_DEFAULT_RULE_PRIORITY == 2**31 - 1


def test_sax_http_fronts_saxml_and_an_unknown_image_fronts_nothing():
    """[K-SAX] sax-http.yaml: the Sax HTTP server answers /generate for the Saxml models it fronts."""
    assert front_end(f"{SAX_HTTP_REPOSITORY}:v1.1.0").engine == "saxml"
    assert front_end("nginx:1.27") is None


def test_the_picker_is_refused_in_its_own_serving_apis_words():
    """The endpoint picker serves no model: the gateway cannot front it, for the reason its serving API gives."""
    epp = gateway_support("epp")
    assert not epp.fronts and epp.why == serving_api("epp").why
    assert epp.why.startswith("the endpoint picker is the gateway's ext-proc gRPC service")


def test_serving_apis_is_the_collected_table_and_other_names_are_not_there():
    assert inference_gateway.SERVING_APIS == serving_apis()
    with pytest.raises(AttributeError, match="SERVING_API"):
        _ = inference_gateway.SERVING_API
