"""The send-queue poller (kernel/doorbell.c): a kernel thread that watches
the rings of user QPs whose engine went idle, so that a process streaming
work requests over a path with no delay posts them without a doorbell
syscall.  Counters: sq_doorbells (the syscalls), sq_polled (engine runs
the poller made).  It must sleep when nothing is watched, and a QP
destroyed while it is watched must go (the kernel-log check runs after
every test)."""
import time

import pytest

from verbs_apps import SERVER_IP, gid_index, link_counters, run_pair

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

PARAM = "/sys/module/sroce/parameters/sq_poll_idle_us"
WRS = 5000


@pytest.fixture(scope="module")
def gids(guest):
    assert int(guest.run("nproc", check=True).stdout) >= 2, "needs two vCPUs"
    return (gid_index(guest, "sroce0", "198.51.100.1"),
            gid_index(guest, "sroce1", SERVER_IP))


@pytest.fixture
def idle_us(guest):
    """Sets sq_poll_idle_us for one test; the default again after it."""
    default = guest.run("cat %s" % PARAM, check=True).stdout.strip()
    yield lambda us: guest.run("echo %d > %s" % (us, PARAM), check=True)
    guest.run("echo %s > %s" % (default, PARAM), check=True)


def stream(guest, gids):
    """WRS 4 KiB WRITEs from sroce0 to sroce1 across the veth pair (no
    delay: each round trip ends inside the doorbell that started it);
    returns the client device's (doorbells, polled runs) for them."""
    def count():
        c = link_counters(guest, "sroce0")
        return c["sq_doorbells"], c["sq_polled"]
    before = count()
    rc, out = run_pair(
        guest,
        "ib_write_bw -d sroce1 -x %d -F -s 4096 -n %d" % (gids[1], WRS),
        "ib_write_bw -d sroce0 -x %d -F -s 4096 -n %d %s" % (gids[0], WRS, SERVER_IP),
        timeout=300)
    assert rc == 0, out
    after = count()
    return after[0] - before[0], after[1] - before[1]


def test_a_stream_posts_without_doorbells(guest, gids):
    """The client busy-polls its CQ on one vCPU and the server sleeps, so
    the poller has the other: it takes the stream's WRs, and most posts
    ring no doorbell (measured: about 0.1 per WR; without it, 1.0)."""
    doorbells, polled = stream(guest, gids)
    assert polled > 0, (doorbells, polled)
    assert doorbells < WRS // 2, (doorbells, polled)


def test_without_the_poller_posts_ring(guest, gids, idle_us):
    """sq_poll_idle_us=0 turns it off: the engine asks for a doorbell each
    time it goes idle.  How often that is depends on the guest's speed: on
    the stock kernel the round trip ends inside the doorbell and every WR
    rings; on the slower debug kernel ACKs pick up a third of the WRs."""
    idle_us(0)
    doorbells, polled = stream(guest, gids)
    assert polled == 0, (doorbells, polled)
    assert doorbells > 0, (doorbells, polled)


def poller_ticks(guest):
    """The poller thread's state and CPU time (utime + stime, in ticks)."""
    r = guest.run("cat /proc/$(pgrep -x sroce_sqpoll)/stat", check=True)
    fields = r.stdout.rsplit(")", 1)[1].split()
    return fields[0], int(fields[11]) + int(fields[12])


def test_the_poller_sleeps_when_idle(guest, gids):
    """After the stream it watches for sq_poll_idle_us, then sleeps: an
    idle device costs no CPU."""
    stream(guest, gids)
    time.sleep(0.5)
    state, ticks = poller_ticks(guest)
    time.sleep(2)
    state2, ticks2 = poller_ticks(guest)
    assert state == state2 == "S", (state, state2)
    # One tick of slack: the stat read itself may catch it waking.
    assert ticks2 - ticks <= 1, (ticks, ticks2)


def test_destroy_while_watched(guest, gids, idle_us):
    """With an idle period of ten minutes the poller still watches the
    client's QP when ib_write_bw destroys it and exits: destroy waits for
    the poller to let go, not for the idle period to end (run_pair's
    timeout is five minutes), and then nothing is left to watch."""
    idle_us(600_000_000)
    doorbells, polled = stream(guest, gids)
    assert polled > 0, (doorbells, polled)
    for _ in range(20):
        state, _ = poller_ticks(guest)
        if state == "S":
            break
        time.sleep(0.1)
    assert state == "S", state
