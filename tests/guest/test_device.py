"""The sroce device as a user meets it: module, rdma links, port, provider."""
from collections import Counter
import re

import pytest

from harness import BAD_KERNEL_LOG, LEAK_MODULES
from verbs_apps import (CLIENT_IP, SERVER_IP, VETH0_IPV6_BACK, gid_index, rc_pingpong,
                        run_pair)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True


def link_names(guest):
    """{device: netdev} over both namespaces (a link shows its netdev only
    in the netdev's own namespace)."""
    out = guest.run("rdma link show; ip netns exec peer rdma link show",
                    check=True).stdout
    links = {}
    for dev, netdev in re.findall(r"link (\S+)/1 [^\n]*?(?:netdev (\S+))?\s*$",
                                  out, re.M):
        links[dev] = netdev or links.get(dev)
    return links


def test_module_loaded_and_links_up(guest):
    assert "sroce" in guest.run("lsmod", check=True).stdout.split()
    links = link_names(guest)
    assert links.get("sroce0") == "veth0"
    assert links.get("sroce1") == "veth1"


def test_sysfs_identity(guest):
    r = guest.run("cat /sys/class/infiniband/sroce0/sroce_abi "
                  "/sys/class/infiniband/sroce0/parent", check=True)
    assert r.stdout.split() == ["sroce-1", "veth0"]


def test_link_delete_and_add(guest):
    guest.run("rdma link delete sroce0", check=True)
    assert "sroce0" not in link_names(guest)
    guest.run("rdma link add sroce0 type sroce netdev veth0", check=True)
    assert link_names(guest).get("sroce0") == "veth0"
    # and the same inside the peer namespace
    guest.run_peer("rdma link delete sroce1", check=True)
    assert "sroce1" not in link_names(guest)
    guest.run_peer("rdma link add sroce1 type sroce netdev veth1", check=True)
    assert link_names(guest).get("sroce1") == "veth1"


def test_link_add_refused(guest):
    dup = guest.run("rdma link add sroce9 type sroce netdev veth0")
    assert dup.rc != 0, "a second sroce device on veth0 must be refused"
    lo = guest.run("rdma link add sroce9 type sroce netdev lo")
    assert lo.rc != 0, "lo is a loopback device"
    missing = guest.run("rdma link add sroce9 type sroce netdev nosuchdev")
    assert missing.rc != 0
    assert "sroce9" not in link_names(guest)


def devinfo(guest, dev):
    r = guest.run("ibv_devinfo -d %s" % dev, check=True)
    return dict(re.findall(r"^\s*(\w+):\s*(.+?)\s*$", r.stdout, re.M))


def test_ibv_devinfo_through_provider(guest):
    info = devinfo(guest, "sroce0")
    assert info["hca_id"] == "sroce0"
    assert info["transport"].startswith("InfiniBand")
    assert info["link_layer"] == "Ethernet"
    assert info["state"].startswith("PORT_ACTIVE")
    assert info["active_mtu"].startswith("1024")
    assert info["phys_port_cnt"] == "1"


def test_ibv_devices_lists_both(guest):
    out = guest.run("ibv_devices", check=True).stdout
    assert re.search(r"^\s+sroce0\s+[0-9a-f]{16}\s*$", out, re.M)
    assert re.search(r"^\s+sroce1\s+[0-9a-f]{16}\s*$", out, re.M)


def with_every_provider(cmd):
    """@cmd with all of rdma-core's providers listed, as on a user's Debian:
    the suite's guests keep only sroce's and rxe's (harness.PROVIDERS),
    and every verbs program loads each one listed."""
    return ("unshare -m sh -c 'mount -t tmpfs every /mnt && "
            "cp /etc/libibverbs.d/*.driver /mnt && { [ ! -d /etc/libibverbs.d.unused ] || "
            "cp /etc/libibverbs.d.unused/*.driver /mnt; } && "
            "mount --bind /mnt /etc/libibverbs.d && exec %s'" % cmd)


def test_sroce_among_every_provider_rdma_core_ships(guest):
    """sroce's provider beside all of rdma-core's (17 in Debian 12): each
    is loaded, none claims sroce's devices, and traffic flows."""
    shipped = int(guest.run("ls /etc/libibverbs.d /etc/libibverbs.d.unused 2>/dev/null "
                            "| grep -c '\\.driver$'", check=True).stdout)
    r = guest.run(with_every_provider(
        "sh -c \"ls /etc/libibverbs.d | wc -l; ibv_devices; ibv_devinfo -d sroce0\""),
        check=True)
    # Every driver file the root has, kept and moved aside, is listed: more
    # than the two the suite keeps.
    assert int(r.stdout.split()[0]) == shipped > 2, (shipped, r.stdout)
    assert re.search(r"^\s+sroce0\s+[0-9a-f]{16}\s*$", r.stdout, re.M), r.stdout
    assert re.search(r"^hca_id:\s+sroce0$", r.stdout, re.M), r.stdout
    g0, g1 = gid_index(guest, "sroce0", CLIENT_IP), gid_index(guest, "sroce1", SERVER_IP)
    rc, out = run_pair(
        guest, with_every_provider("ibv_rc_pingpong -d sroce1 -g %d -n 20 -c" % g1),
        with_every_provider("ibv_rc_pingpong -d sroce0 -g %d -n 20 -c %s" % (g0, SERVER_IP)))
    assert rc == 0, out


def test_port_follows_carrier_and_mtu(guest):
    try:
        guest.run("ip link set veth0 down", check=True)
        assert devinfo(guest, "sroce0")["state"].startswith("PORT_DOWN")
        guest.run("ip link set veth0 up", check=True)
        assert devinfo(guest, "sroce0")["state"].startswith("PORT_ACTIVE")
        guest.run("ip link set veth0 mtu 9000", check=True)
        assert devinfo(guest, "sroce0")["active_mtu"].startswith("4096")
    finally:
        guest.run("ip link set veth0 mtu 1500; ip link set veth0 up; " + VETH0_IPV6_BACK)


# ib_core's table for a port whose PMA offers the extended counters.
PMA_COUNTERS = {
    "symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
    "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
    "port_xmit_discards", "port_xmit_constraint_errors",
    "port_rcv_constraint_errors", "local_link_integrity_errors",
    "excessive_buffer_overrun_errors", "VL15_dropped", "port_xmit_data",
    "port_rcv_data", "port_xmit_packets", "port_rcv_packets", "port_xmit_wait",
    "unicast_xmit_packets", "unicast_rcv_packets", "multicast_xmit_packets",
    "multicast_rcv_packets"}


def port_counters(guest, dev):
    """({PMA counter: value}, {hw counter: value}) of dev's port, read
    in one go."""
    r = guest.run("cd /sys/class/infiniband/%s/ports/1 && grep -H . counters/* "
                  "hw_counters/*" % dev, check=True)
    both = {"counters": {}, "hw_counters": {}}
    for group, name, value in re.findall(r"^(\w+)/(\w+):(\d+)$", r.stdout, re.M):
        both[group][name] = int(value)
    return both["counters"], both["hw_counters"]


def assert_pma_matches_hw(pma, hw):
    """The PMA view of the counters sroce keeps (data in 4-byte words)."""
    assert pma["port_xmit_packets"] == hw["tx_packets"], (pma, hw)
    assert pma["port_rcv_packets"] == hw["rx_packets"], (pma, hw)
    assert pma["port_xmit_data"] == hw["tx_bytes"] // 4, (pma, hw)
    assert pma["port_rcv_data"] == hw["rx_bytes"] // 4, (pma, hw)
    assert pma["multicast_xmit_packets"] == hw["tx_multicast_packets"], (pma, hw)
    assert pma["multicast_rcv_packets"] == hw["rx_multicast_packets"], (pma, hw)
    assert pma["unicast_xmit_packets"] == hw["tx_packets"] - hw["tx_multicast_packets"]
    assert pma["unicast_rcv_packets"] == hw["rx_packets"] - hw["rx_multicast_packets"]
    assert pma["port_rcv_errors"] == hw["rx_malformed"] + hw["rx_icrc_errors"], (pma, hw)
    assert pma["port_xmit_discards"] == hw["tx_errors"], (pma, hw)
    assert pma["link_downed"] == hw["link_downed"], (pma, hw)


def test_pma_port_counters(guest):
    """ports/1/counters has the standard PMA set (the extended table:
    64-bit data and packets, unicast and multicast), what ib_core reads
    through the driver's process_mad as on a ConnectX port; after traffic
    it agrees with the hw_counters, and a link that goes down and up is
    counted once on both ends of the veth pair."""
    pma0, hw0 = port_counters(guest, "sroce0")
    assert set(pma0) == PMA_COUNTERS, sorted(pma0)
    rc, out = rc_pingpong(guest, (gid_index(guest, "sroce0", CLIENT_IP),
                                  gid_index(guest, "sroce1", SERVER_IP)),
                          "-n 100 -s 4096", 60)
    assert rc == 0, out
    pma, hw = port_counters(guest, "sroce0")
    print("pma", pma, "hw", hw)
    assert_pma_matches_hw(pma, hw)
    # 100 round trips of 4 KiB: 4 packets each way each time at MTU 1024.
    assert pma["port_xmit_packets"] - pma0["port_xmit_packets"] >= 400, (pma0, pma)
    assert pma["port_rcv_data"] - pma0["port_rcv_data"] >= 100 * 4096 // 4, (pma0, pma)
    assert pma["symbol_error"] == pma["VL15_dropped"] == pma["port_xmit_wait"] == 0

    downed = {d: port_counters(guest, d)[0]["link_downed"] for d in ("sroce0", "sroce1")}
    try:
        guest.run("ip link set veth0 down", check=True)
        assert devinfo(guest, "sroce0")["state"].startswith("PORT_DOWN")
    finally:
        guest.run("ip link set veth0 up && " + VETH0_IPV6_BACK, check=True)
    for dev in ("sroce0", "sroce1"):
        pma, hw = port_counters(guest, dev)
        assert pma["link_downed"] == downed[dev] + 1, (dev, downed, pma)
        assert_pma_matches_hw(pma, hw)


def test_renamed_device_still_claimed(guest):
    guest.run("rdma dev set sroce0 name foo", check=True)
    try:
        assert devinfo(guest, "foo")["hca_id"] == "foo"
    finally:
        guest.run("rdma dev set foo name sroce0", check=True)


def test_gid_table_has_roce_v2_ipv4(guest):
    r = guest.run("ibv_devinfo -v -d sroce0", check=True)
    assert re.search(r"GID\[\s*\d+\]:\s+::ffff:198\.51\.100\.1, RoCE v2", r.stdout), r


def test_unload_with_devices_and_reload(guest):
    guest.run("rmmod sroce", check=True)
    assert "sroce0" not in link_names(guest)
    assert guest.run("test -e /sys/module/sroce").rc != 0
    guest.run("modprobe sroce && rdma link add sroce0 type sroce netdev veth0"
              " && ip netns exec peer rdma link add sroce1 type sroce netdev veth1",
              check=True)
    assert set(link_names(guest)) >= {"sroce0", "sroce1"}


def test_namespace_deleted_under_live_device(guest):
    """`ip netns del` of a namespace whose netdev carries a sroce device:
    the device goes with its netdev (ib_core unregisters it from a work
    item that may run after the namespace's own state is freed), the
    module still unloads, and the kernel log stays clean.  Several rounds,
    each with a process in the initial namespace holding a UD QP on the
    device (a process inside would keep the namespace alive), so a teardown
    that uses freed namespace state has chances to show (a KASAN report
    under the debug kernel)."""
    for i in range(4):
        guest.run(
            "ip netns add gone && ip link add vgone0 type veth peer name vgone1 && "
            "ip link set vgone1 netns gone && ip link set vgone0 up && "
            "ip -n gone link set vgone1 up && "
            "ip -n gone addr add 203.0.113.2/24 dev vgone1 && "
            "ip netns exec gone rdma link add srocegone type sroce netdev vgone1 && "
            # The IPv4 address's GID: the link-local one waits for DAD.
            "g=$(for t in $(seq 50); do grep -il 'ffff:cb00:7102$' "
            "/sys/class/infiniband/srocegone/ports/1/gids/* && break; sleep 0.2; "
            "done | head -1 | xargs basename) && "
            # A port per round: an earlier round's process may still hold its own.
            "(timeout 30 ibv_ud_pingpong -d srocegone -g $g -p %d >/dev/null 2>&1 &) && "
            "for t in $(seq 50); do rdma res show qp link srocegone/1 | "
            "grep -q UD && break; sleep 0.2; done && "
            "rdma res show qp link srocegone/1 | grep -q UD && ip netns del gone"
            % (18600 + i), check=True)
        # By the device list, not `rdma link show`: that lists the links,
        # then asks for each, and fails with ENODEV when one of them goes
        # in between (seen on the debug kernel: the very race waited for).
        r = guest.run("for t in $(seq 150); do [ -e /sys/class/infiniband/srocegone ] "
                      "|| exit 0; sleep 0.2; done; exit 1")
        assert r.rc == 0, (i, guest.run("rdma link show").output)
        guest.run("ip link del vgone0 2>/dev/null; true")
    guest.run("pkill ibv_ud_pingpong; sleep 1; rmmod sroce && modprobe sroce && "
              "rdma link add sroce0 type sroce netdev veth0 && "
              "ip netns exec peer rdma link add sroce1 type sroce netdev veth1",
              check=True)
    assert set(link_names(guest)) >= {"sroce0", "sroce1"}


# What kmemleak-test.ko logs as it loads (pr_fmt "kmemleak: ", so the
# kernel-log check would take it for kmemleak's own warnings).
KMEMLEAK_TEST_LOG = re.compile(r"kmemleak: (Kmemleak testing|[kv][mz]?alloc\()")


@pytest.mark.debug_kernel
def test_kmemleak_check_sees_a_deliberate_leak(guest):
    """The positive control for the leak check that ends every module on
    the debug kernel (conftest's guest fixture, Guest.kmemleak_leaks):
    kmemleak-test.ko (samples/kmemleak, scripts/debug-kernel.config) drops
    the pointers to 8 kmallocs and 5 vmallocs as it loads, and the same
    scan and report parsing must list all 13.  A kmemleak that is missing,
    not mounted or switched off, a scan that does not run, or a parser that
    loses reports fails here, where it would pass every module's check.
    Its init code is freed once it has run, so the reports' stacks do not
    name the module (a bare address stands for kmemleak_test_init): they
    are told apart by the pid of the modprobe that allocated them.  A scan
    can miss an orphan a stale copy of its pointer still seems to
    reference (here the first scan finds the vmallocs, the second the
    kmallocs), so it scans up to three times.  Every report is then
    cleared (the module stays loaded: its list keeps what it still holds
    referenced), so the module's own check sees only what comes after; a
    leak through sroce or the RDMA core that these scans find, and so
    clear, fails here.  kmemleak is conservative: a stale copy of a
    pointer that no scan overwrites (a register spill, a freed object)
    hides its orphan for good (seen once on 6.1: one kmalloc(32) of the 13
    in three scans).  So each kind must be seen, and nothing but the 13."""
    pid = int(guest.run("sh -c 'echo $$; exec modprobe kmemleak-test'",
                        check=True).stdout.split()[0])
    ours = re.compile(r'^  comm "modprobe", pid %d,' % pid, re.M)
    leaks, sroce_leaks = {}, {}
    for scan in range(4):
        # kmemleak's file lists every suspect not cleared yet: the same
        # object again after the first time it is found.
        for b in guest.kmemleak_leaks(match=re.compile(""),
                                      keep="kmemleak-control-%d" % scan):
            if ours.search(b):
                leaks[b.split("\n")[0]] = b
            if LEAK_MODULES.search(b):
                sroce_leaks[b.split("\n")[0]] = b
        print("scan %d: kmemleak reports %d of kmemleak-test's 13 orphans" %
              (scan + 1, len(leaks)))
        if len(leaks) >= 13:
            break
    guest.run("echo clear > /sys/kernel/debug/kmemleak", check=True)
    assert not sroce_leaks, "".join(sroce_leaks.values())
    # Its log lines are expected here, and only here.
    log = guest.new_kernel_log()
    assert any(KMEMLEAK_TEST_LOG.search(l) for l in log), log
    problems = [l for l in log if BAD_KERNEL_LOG.search(l) and
                not KMEMLEAK_TEST_LOG.search(l)]
    assert not problems, "\n".join(problems)
    # kmallocs of 32, 1024, 2048 and 4096 bytes, two each; vmalloc(64)
    # takes a page (its report's stack runs through __vmalloc_node).
    orphans = Counter([32, 32, 1024, 1024, 2048, 2048] + [4096] * 7)
    sizes = Counter(int(re.search(r"\(size (\d+)\)", head).group(1)) for head in leaks)
    vmallocs = [b for b in leaks.values() if "__vmalloc_node" in b]
    report = (sorted(sizes.elements()), "".join(leaks.values()))
    assert not sizes - orphans, report
    assert vmallocs and len(vmallocs) < len(leaks), report
