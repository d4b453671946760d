"""sroce.ko builds, warnings as errors, against each kernel Debian ships
beyond the three the guests boot: bookworm-backports' 6.12.y (gcc-12),
trixie-backports' newest (gcc-14) and experimental's release candidate
(gcc-16), headers from the archive (scripts/build-kernels).  scripts/test
starts those builds in the background, at idle priority, once the trixie
and sid roots are built; this waits for them after the guest modules.
Run alone, it builds them itself."""
import os
import re
import subprocess
import time

import pytest

from schedule import KERNEL_SUITES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SROCE_BUILD") or os.path.join(ROOT, "build")
KERNELS = os.path.join(BUILD, "kernels")
STATUS = os.path.join(KERNELS, "build-kernels.status")
SUITES = KERNEL_SUITES
# Cold: the archive's headers (~15 MB a kernel), two release roots if
# they are not there yet, and three module builds at idle priority.
TIMEOUT = 1800


@pytest.fixture(scope="module")
def built():
    """Waits for scripts/test's background build, or builds now."""
    if os.environ.get("SROCE_KERNEL_BUILDS") == "background":
        deadline = time.monotonic() + TIMEOUT
        while not os.path.exists(STATUS):
            assert time.monotonic() < deadline, "no build-kernels status after %d s" % TIMEOUT
            time.sleep(2)
    else:
        subprocess.run([os.path.join(ROOT, "scripts", "build-kernels")], timeout=TIMEOUT)


@pytest.mark.runs_last
# Ids that do not read as a guest's release (schedule.release_of): these
# are host tests, and their seconds count as the host's.
@pytest.mark.parametrize("suite", SUITES, ids=[s.replace("-", "_") + "_kernel" for s in SUITES])
def test_module_builds(built, suite):
    out = os.path.join(KERNELS, suite)
    with open(os.path.join(out, "build.log"), errors="replace") as f:
        log = f.read()
    with open(os.path.join(out, "kernelrelease")) as f:
        release = f.read().strip()
    with open(os.path.join(out, "status")) as f:
        status = f.read().strip()
    print("%s: %s" % (suite, release))
    assert status == "0" and os.path.exists(os.path.join(out, "kmod", "sroce.ko")), log[-4000:]
    assert not re.search(r"warning:", log, re.I), log[-4000:]
