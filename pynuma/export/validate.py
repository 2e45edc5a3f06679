"""Check exported objects against the schemas their consumers use.

* NodeResourceTopology: the ``v1alpha2`` ``openAPIV3Schema`` of the CRD
  (``noderesourcetopologies.topology.node.k8s.io``), with ``jsonschema``;
* Lease and Node: the Kubernetes OpenAPI schemas shipped offline by
  ``kubernetes-validate`` (strict: unknown fields are errors).

Both libraries are optional (the ``test`` extra has them); a missing one
raises :class:`~pynuma.errors.Unsupported` naming it.
"""
from __future__ import annotations

from typing import Any, List, Mapping

from ..errors import InputError, Unsupported

KUBERNETES_VERSION = "1.30"


def nrt_schema(crd_path: str, version: str = "v1alpha2") -> dict:
    """The ``openAPIV3Schema`` of ``version`` in the CRD file at ``crd_path``."""
    from ..inputfile import load_yaml

    crd = load_yaml(crd_path)
    try:
        for v in crd["spec"]["versions"]:
            if v.get("name") == version:
                return v["schema"]["openAPIV3Schema"]
    except (KeyError, TypeError):
        pass
    raise InputError(f"{crd_path}: no {version} schema in this CustomResourceDefinition")


def nrt_errors(obj: Mapping[str, Any], schema: Mapping[str, Any], source: str = "the CRD") -> List[str]:
    """Every schema violation of ``obj`` (empty: valid), plus the identity fields the CRD leaves implicit.

    A schema that cannot be used (a bad regular expression, a reference
    loop, a wrong type) is an :class:`InputError` naming ``source``.
    """
    try:
        import jsonschema
    except ImportError:
        raise Unsupported("validating a NodeResourceTopology needs the jsonschema package") from None
    try:
        jsonschema.Draft7Validator.check_schema(schema)
        errors = [f"{'/'.join(map(str, e.absolute_path)) or '(object)'}: {e.message}"
                  for e in jsonschema.Draft7Validator(schema).iter_errors(obj)]
    except jsonschema.SchemaError as err:
        raise InputError(f"{source}: not a usable schema: {err.message}") from None
    except Exception as err:  # noqa: BLE001 - the validator reading a user's schema: its failure is the schema's
        # what a schema the meta-schema accepts can still raise when used: a reference that loops or
        # leads nowhere, a keyword of the wrong type (each release of jsonschema names these its own way)
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise InputError(f"{source}: not a usable schema: {first[:200]}") from None
    if obj.get("apiVersion") != "topology.node.k8s.io/v1alpha2":
        errors.append(f"apiVersion: {obj.get('apiVersion')!r} is not topology.node.k8s.io/v1alpha2")
    if obj.get("kind") != "NodeResourceTopology":
        errors.append(f"kind: {obj.get('kind')!r} is not NodeResourceTopology")
    if not (obj.get("metadata") or {}).get("name"):
        errors.append("metadata.name: missing")
    return errors


def k8s_errors(obj: Mapping[str, Any], version: str = KUBERNETES_VERSION) -> List[str]:
    """Violations of the Kubernetes schema of ``obj``'s apiVersion/kind (strict), empty when valid."""
    try:
        import kubernetes_validate
    except ImportError:
        raise Unsupported("validating Kubernetes objects needs the kubernetes-validate package") from None
    try:
        kubernetes_validate.validate(dict(obj), version, strict=True)
    except kubernetes_validate.ValidationError as err:
        return [f"{'/'.join(map(str, getattr(err, 'path', ()))) or '(object)'}: {err.message}"]
    except kubernetes_validate.SchemaNotFoundError as err:
        return [str(err)]
    return []
