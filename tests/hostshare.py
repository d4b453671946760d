"""Who may use the host's CPUs while a test runs.

The suite runs several guests side by side (scripts/test: pytest-xdist
workers, tests/schedule.py), and builds for the other releases in the
background at idle priority.  Most tests only need their guest to be
correct.  Two kinds need more (tests/conftest.py host_level):
- a test whose guest has more vCPUs than the run's share of the host's
  cores runs with no other guest beside it (NO_OTHER_GUEST): its vCPUs
  take every core, and a vCPU preempted by another guest's while it
  holds a guest lock stalls its sibling.  The builds may go on: they run
  under SCHED_IDLE, on what the guest leaves idle;
- a test whose assertions measure time (rates, latencies, fairness)
  runs with nothing of the suite's beside it (ALONE), builds included.

Read-write locks over three files, with flock(2): every test and build
holds `lock` shared, and every test holds `guests` shared; a NO_OTHER_GUEST
test holds `guests` exclusive, an ALONE one holds `lock` exclusive.  flock
lets new shared holders in while an exclusive one waits, so a busy suite
would starve it: every taker first passes `gate`, which an exclusive
taker holds while it waits, so no new sharer gets in ahead of it.  All
take the locks in that order (gate, lock, guests), so none waits on one
that waits on it.  The lock files live in one folder per run
(SROCE_HOST_LOCKS, set by the controller); a lock held by a process that
dies is released by the kernel with its file descriptor.
"""
import fcntl
import os
import time

LOCKS_ENV = "SROCE_HOST_LOCKS"

SHARED, NO_OTHER_GUEST, ALONE = "shared", "no other guest", "alone"


class HostShare:
    """with HostShare(folder, level): holds the host at that level."""

    def __init__(self, folder, level=SHARED):
        assert level in (SHARED, NO_OTHER_GUEST, ALONE), level
        self.folder = folder
        self.level = level
        self.fds = []
        self.waited = 0.0

    def _take(self, name, exclusive):
        fd = os.open(os.path.join(self.folder, name), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        return fd

    def __enter__(self):
        started = time.monotonic()
        gate = self._take("gate", self.level != SHARED)
        try:
            self.fds.append(self._take("lock", self.level == ALONE))
            self.fds.append(self._take("guests", self.level == NO_OTHER_GUEST))
        except BaseException:
            self.__exit__()
            raise
        finally:
            os.close(gate)	# closing it releases the gate
        self.waited = time.monotonic() - started
        return self

    def __exit__(self, *exc):
        for fd in self.fds:
            os.close(fd)
        self.fds = []
