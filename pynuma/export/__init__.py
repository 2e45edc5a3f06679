"""Outputs other tools consume: the NodeResourceTopology object and Prometheus metrics.

* :mod:`pynuma.export.nrt` -- ``topology.node.k8s.io/v1alpha2`` NodeResourceTopology
* :mod:`pynuma.export.prometheus` -- a prometheus-client collector and HTTP endpoint
* :mod:`pynuma.export.validate` -- check objects against the CRD / Kubernetes schemas
"""
