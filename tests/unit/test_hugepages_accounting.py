"""No-overcommit hugepage accounting."""
from __future__ import annotations

import pytest

from pynuma.errors import AllocationError, InputError
from pynuma.hugepages.accounting import HugepageLedger

MI = 1 << 20


def test_refuses_beyond_free_all_or_nothing():
    ledger = HugepageLedger({"hugepages-2Mi": "20Mi", "hugepages-1Gi": "1Gi"})
    ledger.reserve("a", {"hugepages-2Mi": "16Mi", "memory": "1Gi"})
    assert ledger.free("hugepages-2Mi") == 4 * MI
    with pytest.raises(AllocationError, match="only 4Mi free"):
        ledger.reserve("b", {"hugepages-1Gi": "1Gi", "hugepages-2Mi": "6Mi"})
    assert ledger.free("hugepages-1Gi") == 1 << 30  # nothing half-reserved
    ledger.release("a")
    ledger.reserve("b", {"hugepages-2Mi": "20Mi"})
    assert ledger.free("hugepages-2Mi") == 0


@pytest.mark.parametrize("req,err", [({"hugepages-2Mi": "3Mi"}, InputError), ({"hugepages-2Mi": "-2Mi"}, InputError),
                                     ({"hugepages-64Ki": "64Ki"}, AllocationError)])
def test_bad_requests(req, err):
    with pytest.raises(err):
        HugepageLedger({"hugepages-2Mi": "20Mi"}).check(req)


def test_capacity_must_be_hugepages():
    with pytest.raises(InputError):
        HugepageLedger({"memory": "1Gi"})
