"""The transport between sroce0 (veth0) and sroce1 (veth1, namespace peer)
and in loopback on sroce0, with unmodified verbs applications."""
import re

import pytest

from verbs_apps import (CLIENT_IP, CLIENT_IP6, SERVER_IP, SERVER_IP6, gid_index, guest_tool,
                        loopback_bypass, run_pair, until_cm_listens, until_sent)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): its perftest and pingpong
# pairs spin a vCPU at each end; on one vCPU they take turns, and the unit
# took 2.1x as long beside another guest (docs/test-time.md).
GUEST_CPUS = 2


@pytest.fixture(scope="module")
def gids(guest):
    return {"sroce0": gid_index(guest, "sroce0", CLIENT_IP),
            "sroce1": gid_index(guest, "sroce1", SERVER_IP)}


PINGPONGS = [
    ("ibv_rc_pingpong", "-s 4096 -n 200 -c"),
    ("ibv_rc_pingpong", "-s 64 -n 200 -c -e"),
    ("ibv_uc_pingpong", "-s 1024 -n 200 -c"),
    ("ibv_ud_pingpong", "-s 1024 -n 200 -c"),
    ("ibv_srq_pingpong", "-s 4096 -n 100 -q 4 -c"),
]


@pytest.mark.parametrize("app,args", PINGPONGS, ids=[a + " " + b for a, b in PINGPONGS])
def test_pingpong_across_namespaces(guest, gids, app, args):
    rc, out = run_pair(
        guest,
        "%s -d sroce1 -g %d %s" % (app, gids["sroce1"], args),
        "%s -d sroce0 -g %d %s %s" % (app, gids["sroce0"], args, SERVER_IP))
    assert rc == 0, out
    assert "iters in" in out, out


@pytest.mark.first_release_only  # same apps across namespaces everywhere
@pytest.mark.parametrize("app,args", PINGPONGS, ids=[a + " " + b for a, b in PINGPONGS])
def test_pingpong_loopback(guest, gids, app, args):
    g = gids["sroce0"]
    rc, out = run_pair(guest, "%s -d sroce0 -g %d %s" % (app, g, args),
                       "%s -d sroce0 -g %d %s localhost" % (app, g, args),
                       server_ns=None)
    assert rc == 0, out
    assert "iters in" in out, out


# The sched_yield() calls of one process and its threads, one line each.
# strace, not perf's syscall tracepoints: the debug kernel has none.
YIELDS = "/tmp/yields.txt"
TRACE_YIELDS = "strace -f -qq -e trace=sched_yield -o %s " % YIELDS


@pytest.mark.first_release_only  # the provider's logic, no release's API
@pytest.mark.parametrize("cpus", ["0", "0,1"], ids=["one_cpu", "two_cpus"])
def test_pollers_sharing_one_cpu_give_it_up(guest, gids, cpus):
    """Both ends of a data-checked ibv_rc_pingpong may run on the CPUs
    `cpus` only.  Allowed one CPU, each end's poller yields it after a
    streak of empty polls (userspace-provider/idle_poll.hpp), so the
    other end answers at once instead of after a scheduler slice of
    spinning (~8 ms a round trip in a one-vCPU guest before).  Allowed
    two, polling makes no system call."""
    args = "-s 64 -n 200 -c"
    # The other case's trace must not stand in for this one's.
    guest.run("rm -f %s" % YIELDS, check=True)
    rc, out = run_pair(
        guest,
        "taskset -c %s ibv_rc_pingpong -d sroce1 -g %d %s" % (cpus, gids["sroce1"], args),
        "%staskset -c %s ibv_rc_pingpong -d sroce0 -g %d %s %s"
        % (TRACE_YIELDS, cpus, gids["sroce0"], args, SERVER_IP))
    assert rc == 0, out
    assert "iters in" in out, out
    # A trace strace never wrote fails here, not as zero yields.
    yields = int(guest.run("test -f {0} && {{ grep -c 'sched_yield(' {0} || true; }}"
                           .format(YIELDS), check=True).stdout.strip())
    if cpus == "0":
        assert yields > 0, out
    else:
        assert yields == 0, out


def test_completion_timestamps(guest, gids):
    """ibv_rc_pingpong -t creates its CQ asking for completion timestamps
    and averages the gap between receive timestamps: sroce stamps CQEs only
    on request, so a request that went missing would read as 0 here."""
    rc, out = run_pair(
        guest,
        "ibv_rc_pingpong -d sroce1 -g %d -s 64 -n 100 -t" % gids["sroce1"],
        "ibv_rc_pingpong -d sroce0 -g %d -s 64 -n 100 -t %s" % (gids["sroce0"], SERVER_IP))
    assert rc == 0, out
    avg = re.search(r"Average receive completion clock cycles = ([0-9.]+)", out)
    assert avg, out
    # ns of the device clock between two receives: far above 0 in any guest
    assert float(avg.group(1)) > 1000, out


PERFTESTS = [
    "ib_write_bw -s 65536 -D 2",
    "ib_read_bw -s 65536 -D 2",
    "ib_send_bw -s 65536 -D 2",
    "ib_atomic_bw -D 2",
    "ib_send_bw -c UD -s 1024 -D 2",
    "ib_write_lat -s 2 -n 500",
    "ib_read_lat -s 2 -n 500",
    "ib_send_lat -s 2 -n 500",
    "ib_write_bw -q 8 -s 65536 -D 2",
    "ib_read_bw -q 8 -s 65536 -n 100",
]


@pytest.mark.parametrize("app", ["ibv_rc_pingpong", "ibv_ud_pingpong"])
def test_ipv6(guest, app):
    g0 = gid_index(guest, "sroce0", CLIENT_IP6)
    g1 = gid_index(guest, "sroce1", SERVER_IP6)
    args = "-s 1024 -n 100 -c"
    rc, out = run_pair(guest, "%s -d sroce1 -g %d %s" % (app, g1, args),
                       "%s -d sroce0 -g %d %s %s" % (app, g0, args, SERVER_IP))
    assert rc == 0, out
    assert "iters in" in out, out


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_path_mtu_above_the_links(guest, family):
    """A path MTU above what the link carries (4096 over veth's 1500,
    active_mtu 1024) is accepted, as rxe and ConnectX accept any up to
    max_mtu (UCX sets its IB_PATH_MTU so): packets stay path-MTU long
    for the responder's checks on both ends, and the IP layer fragments
    them, where rxe's don't-fragment packets are dropped and ConnectX's
    would not fit the wire."""
    ips = {"ipv4": (CLIENT_IP, SERVER_IP, "IpFragCreates"),
           "ipv6": (CLIENT_IP6, SERVER_IP6, "Ip6FragCreates")}
    client_ip, server_ip, counter = ips[family]
    g0 = gid_index(guest, "sroce0", client_ip)
    g1 = gid_index(guest, "sroce1", server_ip)
    before = ip_counter(guest, counter)
    args = "-m 4096 -s 16384 -n 100 -c"
    rc, out = run_pair(guest, "ibv_rc_pingpong -d sroce1 -g %d %s" % (g1, args),
                       "ibv_rc_pingpong -d sroce0 -g %d %s %s" % (g0, args, SERVER_IP))
    assert rc == 0, out
    assert "100 iters in" in out, out
    # 4 packets of 4096 bytes a message, each in 3 fragments over veth.
    assert ip_counter(guest, counter) - before >= 100 * 4 * 3, out


def ip_counter(guest, name):
    """The initial namespace's IP counter @name (nstat's spelling)."""
    out = guest.run("nstat -az %s" % name, check=True).stdout
    return int(re.search(r"^%s\s+(\d+)" % name, out, re.M).group(1))


@pytest.mark.first_release_only  # same perftests across namespaces everywhere
@pytest.mark.parametrize("cmd", PERFTESTS)
def test_perftest_loopback(guest, gids, cmd):
    g = gids["sroce0"]
    rc, out = run_pair(guest, "%s -d sroce0 -x %d -F" % (cmd, g),
                       "%s -d sroce0 -x %d -F localhost" % (cmd, g),
                       server_ns=None, timeout=90)
    assert rc == 0, out


LO_PACKETS = "cat /sys/class/net/lo/statistics/rx_packets"


@pytest.mark.first_release_only
def test_loopback_bypass(guest, gids):
    """A device talking to itself skips the IP stack (localrx.c), as rxe
    and a NIC's internal loopback do: its packets never pass lo, whose
    counter stands still but for the applications' own TCP exchange.
    With the device's loopback_bypass at 0 they take the stack's way,
    through lo.  The data is checked either way (-c)."""
    g, iters = gids["sroce0"], 500
    app = "ibv_rc_pingpong -d sroce0 -g %d -s 4096 -n %d -c" % (g, iters)
    through_lo = {}
    for bypass in ("1", "0"):
        with loopback_bypass(guest, bypass):
            before = int(guest.run(LO_PACKETS, check=True).stdout)
            rc, out = run_pair(guest, app, app + " localhost", server_ns=None)
            assert rc == 0 and "iters in" in out, (bypass, out)
            through_lo[bypass] = int(guest.run(LO_PACKETS, check=True).stdout) - before
    print("packets through lo by loopback_bypass:", through_lo)
    # Each side sends `iters` messages: with the stack, those alone pass lo.
    assert through_lo["0"] >= 2 * iters, through_lo
    # Without it: the QP numbers' TCP exchange, a few dozen packets.
    assert through_lo["1"] < iters // 5, through_lo


UD_DATAGRAMS = 20000


@pytest.mark.first_release_only  # the kernel's UD paths, no release's API
@pytest.mark.parametrize("bypass", ["1", "0"], ids=["bypass", "through-the-stack"])
def test_ud_datagrams_arrive_whole_and_in_order(guest, gids, bypass):
    """Two UD QPs of sroce0 send each other numbered datagrams at once,
    each from its own thread, inline and gathered, up to the MTU, never
    more than the peer has receives posted (tools/ud_order.cpp): every one
    arrives, whole, once and in order, by the device's own loopback and
    through the IP stack.  UCX's UD transport drops a datagram that is not
    the next one and resends, and its gtest runs two workers of one
    process on one device this way (docs/peers.md)."""
    tool = guest_tool(guest, "ud_order")
    with loopback_bypass(guest, bypass):
        r = guest.run("%s sroce0 %d %d" % (tool, gids["sroce0"], UD_DATAGRAMS), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0 and "0 checks failed" in r.stdout, r


@pytest.mark.parametrize("cmd", PERFTESTS)
def test_perftest_across_namespaces(guest, gids, cmd):
    rc, out = run_pair(
        guest,
        "%s -d sroce1 -x %d -F" % (cmd, gids["sroce1"]),
        "%s -d sroce0 -x %d -F %s" % (cmd, gids["sroce0"], SERVER_IP),
        timeout=90)
    assert rc == 0, out


RDMACM = [
    ("rping -s -a %(srv)s -V -C 100 -S 4096", "rping -c -a %(srv)s -V -C 100 -S 4096"),
    ("ucmatose -c 4 -C 20", "ucmatose -s %(srv)s -c 4 -C 20"),
    ("udaddy -c 2 -C 10", "udaddy -s %(srv)s -c 2 -C 10"),
    ("rdma_server", "rdma_client -s %(srv)s"),
    # rsockets: both ends must run the same test; -T v verifies the data
    ("rstream -T v -S 65536 -C 100", "rstream -s %(srv)s -T v -S 65536 -C 100"),
    # the same over rsockets' mapped I/O (riomap/riowrite)
    ("riostream -T v -S 65536 -C 100", "riostream -s %(srv)s -T v -S 65536 -C 100"),
]


@pytest.mark.parametrize("server,client", RDMACM, ids=[c[0].split()[0] for c in RDMACM])
def test_rdmacm_across_namespaces(guest, server, client):
    rc, out = run_pair(guest, server % {"srv": SERVER_IP},
                       client % {"srv": SERVER_IP}, timeout=90, port=None)
    assert rc == 0, out


def test_rcopy_across_namespaces(guest):
    """rsockets file copy; its server serves forever, so it is stopped by
    PID once the client is done, and the copy must match byte for byte."""
    r = guest.run(
        "head -c 3000000 /dev/urandom >/tmp/rcopy.src && rm -rf /tmp/rcopy.dst "
        "&& mkdir /tmp/rcopy.dst && cd /tmp/rcopy.dst && "
        "{ ip netns exec peer timeout 120 rcopy >/tmp/rcopy.log 2>&1 & srv=$!; }; "
        "%s; timeout 60 rcopy /tmp/rcopy.src %s:/tmp/rcopy.dst/copy; crc=$?; "
        "kill $srv; wait $srv; cat /tmp/rcopy.log; echo client=$crc; "
        "[ $crc = 0 ] && cmp /tmp/rcopy.src /tmp/rcopy.dst/copy"
        % (until_cm_listens("ip netns exec peer ", "comm rcopy"), SERVER_IP),
        timeout=150)
    assert r.rc == 0, r


# UCX (under Open MPI, among others) over sroce, across namespaces: its UD
# transport, and RC through UCP, which connects RC through UD ("rc_v":
# rc_verbs with ud_verbs for wire-up).  On rxe both time out: UCX up to
# 1.18 finds a UD packet's addresses by the completion's SL, which only
# ConnectX (and now sroce) sets (resp.c, SROCE_UD_SL_IPV4).
UCX = [
    ("uct ud_verbs am_lat", "ucx_perftest -d %(dev)s:1 -x ud_verbs -t am_lat -n 2000 -s 64"),
    ("uct ud_verbs am_bw", "ucx_perftest -d %(dev)s:1 -x ud_verbs -t am_bw -n 2000 -s 128"),
    ("ucp rc_v tag_lat", "env UCX_TLS=self,rc_v UCX_NET_DEVICES=%(dev)s:1 "
                         "ucx_perftest -t tag_lat -n 2000 -s 64"),
    ("ucp rc_v tag_bw", "env UCX_TLS=self,rc_v UCX_NET_DEVICES=%(dev)s:1 "
                        "ucx_perftest -t tag_bw -n 200 -s 65536"),
]


@pytest.fixture(scope="module")
def ucx_perftest_args(guest):
    """What this release's ucx_perftest needs to pair over TCP: UCX 1.18
    built with MPI takes a lone process for an MPI run unless told -P 0
    (1.13 has no -P).  Skips where UCX has no verbs transport at all: sid's
    libucx0 (1.23.0~rc1) is built without libuct_ib, so it cannot use any
    RDMA device, ConnectX included."""
    r = guest.run("ls /usr/lib/*/ucx/libuct_ib.so.0 && ucx_info -v | head -1", check=False)
    if r.rc != 0:
        pytest.skip("this release's UCX has no InfiniBand/RoCE transport "
                    "(no libuct_ib): %s" % guest.run("dpkg-query -W libucx0").stdout.strip())
    help_text = guest.run("ucx_perftest -h 2>&1").stdout
    return " -P 0" if "-P <0|1>" in help_text else ""


@pytest.mark.parametrize("cmd", [c for _, c in UCX], ids=[n for n, _ in UCX])
def test_ucx_perftest_across_namespaces(guest, ucx_perftest_args, cmd):
    cmd += ucx_perftest_args
    rc, out = run_pair(guest, cmd % {"dev": "sroce1"},
                       cmd % {"dev": "sroce0"} + " " + SERVER_IP, port=13337)
    assert rc == 0, out
    assert re.search(r"Final:\s+\d+", out), out
    # An orderly teardown raises no asynchronous error (UCX logs each).
    assert "Async event" not in out, out


def test_arming_a_cq_raises_an_event_for_unpolled_completions(guest, gids):
    """ibv_req_notify_cq() on a CQ holding a completion not yet polled
    raises an event, as on ConnectX and as ib_req_notify_cq() promises for
    completions added since the last poll; with every completion polled
    it raises none.  UCX's sleep mode arms with no poll in between: without
    it both ends of a ping-pong slept for good (ucx_perftest -E sleep)."""
    r = guest.run("%s sroce0 %d" % (guest_tool(guest, "cq_arm"), gids["sroce0"]),
                  timeout=60)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0 and "0 checks failed" in r.stdout, r


@pytest.mark.parametrize("tls", ["rc_v", "ud_v"])
def test_ucx_sleep_mode_across_namespaces(guest, ucx_perftest_args, tls):
    """ucx_perftest's sleep mode (-E sleep): each end waits for its
    completions in poll(2) on the channel, as UCX's blocking users (MPI
    in its blocking progress, ucp_worker_wait) do."""
    cmd = ("env UCX_TLS=self,%s UCX_NET_DEVICES=%%(dev)s:1 ucx_perftest "
           "-t tag_lat -n 1000 -s 64 -E sleep" % tls) + ucx_perftest_args
    rc, out = run_pair(guest, cmd % {"dev": "sroce1"},
                       cmd % {"dev": "sroce0"} + " " + SERVER_IP, port=13337, timeout=120)
    assert rc == 0, out
    assert re.search(r"Final:\s+1000\b", out), out
    assert "Async event" not in out, out


def test_link_delete_while_in_use(guest, gids):
    """rdma link delete returns promptly while an application is running
    on the device; the application then fails cleanly."""
    r = guest.run(
        "ip netns exec peer ib_write_bw -d sroce1 -x %d -F -D 20 "
        ">/tmp/srv.log 2>&1 & "
        "for i in $(seq 100); do ip netns exec peer ss -Hltn 'sport = :18515' "
        "| grep -q . && break; sleep 0.2; done; "
        "ib_write_bw -d sroce0 -x %d -F -D 20 %s >/tmp/cli.log 2>&1 & "
        "%s; start=$(date +%%s); ip netns exec peer rdma link delete sroce1; "
        "rc=$?; echo \"delete rc=$rc seconds=$(( $(date +%%s) - start ))\"; "
        "wait; ip netns exec peer rdma link add sroce1 type sroce netdev veth1"
        % (gids["sroce1"], gids["sroce0"], SERVER_IP, until_sent("sroce0")), timeout=120)
    assert "delete rc=0" in r.stdout, r
    seconds = int(r.stdout.split("seconds=")[1].split()[0])
    # (The debug kernel runs everything about three times slower: 6 s
    # there with a second guest on the machine.)
    assert seconds <= 5 * guest.slowdown, r


def test_zz_module_unloads_after_suite(guest):
    guest.run("rdma link delete sroce0; ip netns exec peer rdma link delete sroce1; "
              "rmmod sroce", check=True)
    guest.run("modprobe sroce && rdma link add sroce0 type sroce netdev veth0 && "
              "ip netns exec peer rdma link add sroce1 type sroce netdev veth1",
              check=True)
