"""Hostile user space: uverbs_fuzz (tools/uverbs_fuzz.cpp) drives sroce0
from several threads as an unprivileged user, with random verbs and
hostile attributes, corrupted shared rings, raw uverbs commands, fork()
with the rings mapped and close() of the device fd under use.

The kernel must answer every call (the tool's watchdog fails the run on
a call that does not return), keep its log clean (the check after every
guest test: KASAN, lockdep and the rest under the debug kernel), free
everything the process held when it exits (no sroce0 objects left,
the module unloads), and the device must still carry verified traffic.

The seeds are tests/fuzz/uverbs-seeds.txt, the corpus: one line each,
the seed and what it found if anything.  Replay one for longer with
    scripts/fuzz-uverbs --seed SEED --seconds 1800 [--kernel debug]
"""
import os

import pytest

from verbs_apps import (CLIENT_IP, NOBODY, SERVER_IP, gid_index, guest_tool,
                        rc_pingpong)

# Core: runs on every Debian release with --releases (scripts/test); each
# release's ib_core has its own uverbs code to get wrong.
ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): the fuzzer's threads race each
# other (a close() of the device under a call in flight), which needs a
# second CPU to happen as it does on real machines.
GUEST_CPUS = 2

HERE = os.path.dirname(os.path.abspath(__file__))
SEEDS = os.path.join(HERE, "..", "fuzz", "uverbs-seeds.txt")
SECONDS = 45


def corpus():
    with open(SEEDS) as f:
        return [int(line.split()[0]) for line in f
                if line.strip() and not line.startswith("#")]


# Two seeds on the first release, the first on the others: CI's 90
# minutes are shared by three releases, and a seed's 45 s find the same
# kind of thing on each (scripts/fuzz-uverbs runs longer ones).
@pytest.mark.parametrize("seed", [corpus()[0], pytest.param(
    corpus()[1], marks=pytest.mark.first_release_only)])
def test_uverbs_fuzz_leaves_the_kernel_whole(guest, seed):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    tool = guest_tool(guest, "uverbs_fuzz")
    r = guest.run("%s%s sroce0 %d %d %d 4" % (NOBODY, tool, g, seed, SECONDS),
                  timeout=SECONDS + 120)
    print(r.output[-4000:])
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "every call answered" in r.stdout, r
    # Everything the process held is gone with it...
    left = guest.run("rdma resource show qp link sroce0/1; "
                     "rdma resource show cq dev sroce0; rdma resource show mr dev sroce0; "
                     "rdma resource show pd dev sroce0", check=True).stdout
    assert "uverbs_fuzz" not in left, left
    # ...and the device still carries verified traffic.
    rc, out = rc_pingpong(guest, (g, gid_index(guest, "sroce1", SERVER_IP)),
                          "-s 4096 -n 200 -c", timeout=120)
    assert rc == 0, out
