"""pytest configuration shared by every sroce test.

Guest tests ask for the `guest` fixture (one guest per test module, booted
through scripts/vm-run); a module can choose the guest's options with
`GUEST_OPTIONS = {...}` (see harness.Guest).  `pytest --distro trixie` (or
sid) boots every guest on that Debian release instead of this machine's
(scripts/build --distro first).  After each test the guest's kernel log is
checked, and the test fails if it shows a warning or oops.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "guest"))
from harness import Guest, GuestDied  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--distro", default=None, choices=["bookworm", "trixie", "sid"],
                     help="Debian release the guests boot (default: this "
                          "machine's, bookworm)")


@pytest.fixture(scope="module")
def guest(request, tmp_path_factory):
    options = dict(getattr(request.module, "GUEST_OPTIONS", {}))
    options.setdefault("distro", request.config.getoption("distro"))
    out = tmp_path_factory.mktemp("guest-" + request.module.__name__.split(".")[-1])
    g = Guest(out, **options)
    try:
        g.start()
    except GuestDied as e:
        pytest.fail(str(e), pytrace=False)
    yield g
    g.stop()


@pytest.fixture(autouse=True)
def _kernel_log_clean(request):
    """Fails a guest test whose run left warnings or oopses in the kernel log."""
    yield
    if "guest" not in request.fixturenames:
        return
    g = request.getfixturevalue("guest")
    if g.proc is None or g.proc.poll() is not None:
        return  # the guest is gone: the test itself has already failed
    try:
        problems = g.kernel_problems()
    except GuestDied as e:
        pytest.fail(str(e), pytrace=False)
    if problems:
        pytest.fail("guest kernel log shows problems:\n" + "\n".join(problems),
                    pytrace=False)
