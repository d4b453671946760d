"""Who may use the host's CPUs while a test runs.

The suite runs several guests side by side (scripts/test: pytest-xdist
workers, tests/schedule.py), and builds for the other releases in the
background.  Most tests only need their guest to be correct; a test
whose assertions measure time (rates, latencies, fairness) says so
(tests/conftest.py needs_host_alone) and then runs with nothing of the
suite's beside it.

A readers-writer lock over two files, with flock(2): everyone who shares
the host holds `lock` shared; a test that needs it alone holds it
exclusive.  flock lets new shared holders in while an exclusive one waits,
so a busy suite would starve it: every taker first passes `gate`, which
the exclusive taker holds while it waits, so no new sharer gets in ahead
of it.  The lock files live in one folder per run (SROCE_HOST_LOCKS, set
by the controller); a lock held by a process that dies is released by the
kernel with its file descriptor.
"""
import fcntl
import os
import time

LOCKS_ENV = "SROCE_HOST_LOCKS"


class HostShare:
    """with HostShare(folder, alone): holds the host shared, or alone."""

    def __init__(self, folder, alone=False):
        self.folder = folder
        self.alone = alone
        self.fd = None
        self.waited = 0.0

    def __enter__(self):
        started = time.monotonic()
        gate = os.open(os.path.join(self.folder, "gate"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(gate, fcntl.LOCK_EX if self.alone else fcntl.LOCK_SH)
            self.fd = os.open(os.path.join(self.folder, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self.fd, fcntl.LOCK_EX if self.alone else fcntl.LOCK_SH)
        finally:
            os.close(gate)	# closing it releases the gate
        self.waited = time.monotonic() - started
        return self

    def __exit__(self, *exc):
        os.close(self.fd)
        self.fd = None
