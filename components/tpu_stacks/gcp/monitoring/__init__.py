"""Cloud Monitoring for a stack: its dashboard and alert policies, built from what the stack deploys.

`model` is the Monitoring API's dashboard shape as typed dataclasses (serialised deterministically);
`queries` the PromQL each widget and alert runs, every metric name read from the catalogues;
`dashboards` and `alerts` what each workload shows and pages on; `links` the Cloud Console
addresses a user opens first; `component` declares the resources. Pure but for `component`.
"""
