"""The offline engine behind `tpu-stacks plan`: run a Pulumi program under mocks, then check it.

There is no Pulumi CLI, provider plugin or cloud here, so each piece stands in for one part of a
real `pulumi preview`: `config` reads stack files as the CLI does, `engine` plays the resource
monitor, `manifests` renders Kubernetes objects as the provider would send them, `schema`
validates them strictly, and `policy` drives a policy pack over the Analyzer protocol.
"""
