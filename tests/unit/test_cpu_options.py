"""CPU Manager option parsing: Go booleans, feature gates, incompatible pairs, machine checks."""
from __future__ import annotations

import pytest

from pynuma.errors import InputError
from pynuma.policy.cpumanager.options import ALL_GATES_ON, option_available, parse_go_bool, parse_options, validate_options

from .cpu_fixtures import QUAD_NODE, machine


@pytest.mark.parametrize("text, value", [("1", True), ("t", True), ("TRUE", True), ("True", True),
                                         ("0", False), ("F", False), ("false", False)])
def test_go_bools(text, value):
    assert parse_go_bool(text) is value


@pytest.mark.parametrize("text", ["yes", "", "on", "tRUE", " true"])
def test_bad_go_bools(text):
    with pytest.raises(ValueError, match="invalid syntax"):
        parse_go_bool(text)


def test_gates_default_alpha_off_beta_on():
    assert option_available("full-pcpus-only") and option_available("strict-cpu-reservation")
    assert not option_available("align-by-socket")
    assert option_available("align-by-socket", {"CPUManagerPolicyAlphaOptions": True})
    assert not option_available("distribute-cpus-across-numa", {"CPUManagerPolicyBetaOptions": False})
    assert not option_available("nope", ALL_GATES_ON)
    with pytest.raises(InputError, match='Alpha-level Options not enabled, but option "align-by-socket"'):
        parse_options({"align-by-socket": "true"})


def test_values_and_incompatible_pairs():
    assert parse_options({"full-pcpus-only": "false"}).as_flags() == {}
    got = parse_options({"full-pcpus-only": "true", "distribute-cpus-across-numa": "1"})
    assert got.full_pcpus_only and got.distribute_cpus_across_numa and not got.align_by_socket
    with pytest.raises(InputError, match="can not be used at the same time"):
        parse_options({"full-pcpus-only": "true", "distribute-cpus-across-cores": "true"}, ALL_GATES_ON)
    with pytest.raises(InputError, match='bad value for option "full-pcpus-only"'):
        parse_options({"full-pcpus-only": "yes"})


def test_align_by_socket_machine_checks():
    opts = parse_options({"align-by-socket": "true"}, ALL_GATES_ON)
    validate_options(opts, QUAD_NODE)
    with pytest.raises(InputError, match="single-numa-node"):
        validate_options(opts, QUAD_NODE, "single-numa-node")
    more_sockets = machine(sockets=2, cores_per_node=2, num_numa_nodes=1)
    with pytest.raises(InputError, match="more than number of NUMA"):
        validate_options(opts, more_sockets)
