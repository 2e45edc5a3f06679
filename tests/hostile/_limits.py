"""The address-space cap the hostile tests put on a child, shared so one rule says when it applies."""
from __future__ import annotations

import os
import resource

#: AddressSanitizer reserves terabytes of shadow address space at start-up, so under the
#: sanitizer leg (.ci/sanitize preloads libasan) a cap would fail every child before it runs;
#: that leg looks for memory errors, and the bounded-memory property is checked by the plain run.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def cap_address_space(limit: int) -> None:
    """Cap this process's address space at ``limit`` bytes (not under AddressSanitizer)."""
    if not UNDER_ASAN:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
