"""sroce on netdevs that carry IP but have no MAC (issue 15): a GRE tunnel
across the veth pair (gre1 in the initial namespace and in `peer`, IPv4
and IPv6 inside), a tun device, and a netdev without IP (vcan), refused.

The tunnel's packets leave by veth0/veth1 as GRE (IP protocol 47), so
the veth pair's own sroce0/sroce1 never see them: what arrives at sroceg0
and sroceg1 came through the tunnel."""
import ipaddress
import re

import pytest

from verbs_apps import gid_index, link_counters, run_pair

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

GRE_IP = "203.0.113.1"          # gre1, initial namespace (sroceg0)
GRE_PEER_IP = "203.0.113.2"     # gre1 in peer (sroceg1)
GRE_IP_LATER = "203.0.113.11"
GRE_IP6 = "2001:db8:77::1"
GRE_PEER_IP6 = "2001:db8:77::2"
TUN_IP = "192.0.2.201"


def gre_end(local, remote, ip, ip6, dev):
    return ("ip link add gre1 type gre local {l} remote {r} ttl 64 && "
            "ip addr add {ip}/24 dev gre1 && "
            "ip -6 addr add {ip6}/64 dev gre1 nodad && ip link set gre1 up && "
            "rdma link add {dev} type sroce netdev gre1"
            .format(l=local, r=remote, ip=ip, ip6=ip6, dev=dev))


@pytest.fixture(scope="module")
def gre(guest):
    """sroceg0 on gre1 (198.51.100.1 -> .2) here, sroceg1 on gre1 in
    peer; the addresses are there before `rdma link add`."""
    guest.run("modprobe ip_gre", check=True)
    guest.run(gre_end("198.51.100.1", "198.51.100.2", GRE_IP, GRE_IP6,
                      "sroceg0"), check=True)
    guest.run_peer(gre_end("198.51.100.2", "198.51.100.1", GRE_PEER_IP,
                           GRE_PEER_IP6, "sroceg1"), check=True)
    return {"sroceg0": gid_index(guest, "sroceg0", GRE_IP),
            "sroceg1": gid_index(guest, "sroceg1", GRE_PEER_IP)}


def devinfo(guest, dev):
    r = guest.run("ibv_devinfo -d %s" % dev, check=True)
    return dict(re.findall(r"^\s*(\w+):\s*(.+?)\s*$", r.stdout, re.M))


def node_guid(guest, dev):
    return guest.run("cat /sys/class/infiniband/%s/node_guid" % dev,
                     check=True).stdout.strip()


def test_gre_link_gids_guid_port(guest, gre):
    out = guest.run("rdma link show; ip netns exec peer rdma link show",
                    check=True).stdout
    assert re.search(r"link sroceg0/1 state ACTIVE .*netdev gre1", out), out
    assert re.search(r"link sroceg1/1 state ACTIVE .*netdev gre1", out), out
    # The tunnel's own addresses are its RoCE v2 GIDs, IPv4 and IPv6.
    gid_index(guest, "sroceg0", GRE_IP6)
    gid_index(guest, "sroceg1", GRE_PEER_IP6)
    guids = {d: node_guid(guest, d) for d in ("sroceg0", "sroceg1", "sroce0")}
    for d, g in guids.items():
        assert re.fullmatch(r"[0-9a-f]{4}(:[0-9a-f]{4}){3}", g), guids
        assert g != "0000:0000:0000:0000", guids
    assert len(set(guids.values())) == 3, guids
    # Not from a MAC (gre1 has none): a locally administered EUI-64.
    assert int(guids["sroceg0"][:2], 16) & 0x03 == 0x02, guids
    # Stable for the netdev: the same GUID when the link is made again.
    guest.run("rdma link delete sroceg0 && "
              "rdma link add sroceg0 type sroce netdev gre1", check=True)
    assert node_guid(guest, "sroceg0") == guids["sroceg0"]
    info = devinfo(guest, "sroceg0")
    assert info["state"].startswith("PORT_ACTIVE"), info
    assert info["link_layer"] == "Ethernet", info
    # gre1's MTU is 1476: 1024 is the largest IB MTU whose packets fit.
    assert guest.run("cat /sys/class/net/gre1/mtu", check=True).stdout.strip() == "1476"
    assert info["active_mtu"].startswith("1024"), info


def wait_gid(guest, dev, ip):
    """The GID index of `ip` on `dev` once it is there: a GID for an
    address added to an L3 netdev comes from a work item."""
    addr = ipaddress.ip_address(ip)
    if addr.version == 4:
        addr = ipaddress.IPv6Address("::ffff:" + ip)
    guest.run("for i in $(seq 50); do grep -q %s /sys/class/infiniband/%s/"
              "ports/1/gids/* && break; sleep 0.1; done" % (addr.exploded, dev))
    return gid_index(guest, dev, ip)


def test_gre_address_added_later_is_a_gid(guest, gre):
    """ib_core follows the addresses of Ethernet netdevs only: sroce has
    it rescan a tunnel that got one after `rdma link add`."""
    guest.run("ip addr add %s/24 dev gre1" % GRE_IP_LATER, check=True)
    try:
        wait_gid(guest, "sroceg0", GRE_IP_LATER)
    finally:
        guest.run("ip addr del %s/24 dev gre1" % GRE_IP_LATER, check=True)


def test_gre_mtu_follows_netdev(guest, gre):
    try:
        guest.run("ip link set gre1 mtu 1100", check=True)
        # 1100 bytes of IP packet hold 512 bytes of IB payload, not 1024
        assert devinfo(guest, "sroceg0")["active_mtu"].startswith("512")
    finally:
        guest.run("ip link set gre1 mtu 1476", check=True)
    assert devinfo(guest, "sroceg0")["active_mtu"].startswith("1024")
    # Below IPv6's minimum MTU (1280) the kernel took gre1's IPv6
    # addresses away: given back, it is a GID again.
    guest.run("ip -6 addr add %s/64 dev gre1 nodad" % GRE_IP6, check=True)
    wait_gid(guest, "sroceg0", GRE_IP6)


def through_tunnel(guest, server, client, **kw):
    """Runs a server on sroceg1 (peer) and a client on sroceg0; checks
    that packets went through the tunnel's sroce devices and none through
    the veth pair's."""
    before = {d: link_counters(guest, d)
              for d in ("sroceg0", "sroceg1", "sroce0", "sroce1")}
    rc, out = run_pair(guest, server, client, **kw)
    assert rc == 0, out
    after = {d: link_counters(guest, d) for d in before}
    delta = {d: {k: after[d][k] - before[d][k]
                 for k in ("tx_packets", "rx_packets", "rx_icrc_errors")}
             for d in before}
    # the client's requests reach the server (UD: nothing comes back)
    assert delta["sroceg0"]["tx_packets"] > 0, delta
    assert delta["sroceg1"]["rx_packets"] > 0, delta
    for d in ("sroceg0", "sroceg1"):
        assert delta[d]["rx_icrc_errors"] == 0, delta
    for d in ("sroce0", "sroce1"):
        assert delta[d]["tx_packets"] == 0 and delta[d]["rx_packets"] == 0, delta
    return out, delta


PINGPONGS = [
    ("ibv_rc_pingpong", "-s 4096 -n 200 -c"),
    ("ibv_ud_pingpong", "-s 1024 -n 200 -c"),
]


@pytest.mark.parametrize("app,args", PINGPONGS, ids=[a for a, _ in PINGPONGS])
def test_gre_pingpong(guest, gre, app, args):
    out, delta = through_tunnel(
        guest, "%s -d sroceg1 -g %d %s" % (app, gre["sroceg1"], args),
        "%s -d sroceg0 -g %d %s %s" % (app, gre["sroceg0"], args, GRE_PEER_IP))
    assert "iters in" in out, out
    # 200 round trips, each message in its own packet or (RC) in 4
    assert delta["sroceg1"]["rx_packets"] >= 200, delta


def test_gre_pingpong_ipv6(guest, gre):
    g0 = gid_index(guest, "sroceg0", GRE_IP6)
    g1 = gid_index(guest, "sroceg1", GRE_PEER_IP6)
    args = "-s 1024 -n 100 -c"
    out, _ = through_tunnel(
        guest, "ibv_rc_pingpong -d sroceg1 -g %d %s" % (g1, args),
        "ibv_rc_pingpong -d sroceg0 -g %d %s %s" % (g0, args, GRE_PEER_IP))
    assert "iters in" in out, out


PERFTESTS = [
    "ib_write_bw -s 65536 -n 200",
    "ib_send_bw -s 65536 -n 200",
    "ib_read_bw -s 65536 -n 100",
    "ib_send_bw -c UD -s 1024 -n 500",
]


@pytest.mark.parametrize("cmd", PERFTESTS)
def test_gre_perftest(guest, gre, cmd):
    out, delta = through_tunnel(
        guest, "%s -d sroceg1 -x %d -F" % (cmd, gre["sroceg1"]),
        "%s -d sroceg0 -x %d -F %s" % (cmd, gre["sroceg0"], GRE_PEER_IP),
        timeout=120)
    # the result line: bytes, iterations, BW peak, BW average, msg rate
    assert re.search(r"^\s*\d+\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s*$", out, re.M), out


@pytest.mark.parametrize("srv", [GRE_PEER_IP, GRE_PEER_IP6])
def test_gre_rdmacm_refused_by_ib_core(guest, gre, srv):
    """rdma_cm does not run on an L3 netdev, on any of the three kernels:
    ib_core's rdma_cm takes an address for a RoCE GID only when its netdev
    is ARPHRD_ETHER and otherwise looks for an InfiniBand GID, which a
    RoCE port has none of (cma_validate_port), so binding to the tunnel's
    address finds no device.  rxe on a tunnel is refused the same way.
    Nothing below rdma_cm is involved: should a kernel lift that, this
    test fails and the tunnel gets rping/ucmatose tests instead."""
    r = guest.run_peer("timeout 20 rping -s -a %s -V -C 1" % srv, timeout=60)
    assert r.rc != 0, r
    assert "rdma_bind_addr: No such device" in r.output, r


TUN_HOLDER = r"""
import fcntl, os, struct, sys, time
fd = os.open("/dev/net/tun", os.O_RDWR)
fcntl.ioctl(fd, 0x400454ca, struct.pack("16sH22x", b"tun7", 0x0001 | 0x1000))
print("open", flush=True)
time.sleep(float(sys.argv[1]))
"""


def port_state(guest, dev):
    return guest.run("cat /sys/class/infiniband/%s/ports/1/state" % dev,
                     check=True).stdout.strip()


def test_tun_port_follows_carrier(guest):
    """A tun device has carrier only while a process holds it open."""
    guest.run("modprobe tun && ip tuntap add mode tun dev tun7 && "
              "ip addr add %s/24 dev tun7 && ip link set tun7 up && "
              "rdma link add sroceT type sroce netdev tun7" % TUN_IP, check=True)
    try:
        gid_index(guest, "sroceT", TUN_IP)
        assert node_guid(guest, "sroceT") != "0000:0000:0000:0000"
        assert port_state(guest, "sroceT") == "1: DOWN"
        guest.run("cat > /tmp/tunhold.py <<'EOF'\n%s\nEOF" % TUN_HOLDER, check=True)
        r = guest.run("python3 /tmp/tunhold.py 8 >/tmp/tunhold.log 2>&1 & "
                      "for i in $(seq 50); do grep -q open /tmp/tunhold.log && break; "
                      "sleep 0.1; done; cat /sys/class/infiniband/sroceT/ports/1/state; "
                      "wait", check=True, timeout=60)
        assert r.stdout.strip() == "4: ACTIVE", r
        assert port_state(guest, "sroceT") == "1: DOWN"
    finally:
        guest.run("ip link del tun7")
    assert "sroceT" not in guest.run("rdma link show", check=True).stdout


def test_netdev_without_ip_refused(guest):
    """vcan carries CAN frames, not IP (no IPv4 or IPv6 on it)."""
    guest.run("modprobe vcan && ip link add vcan7 type vcan && "
              "ip link set vcan7 up", check=True)
    try:
        r = guest.run("rdma link add sroceC type sroce netdev vcan7")
        assert r.rc != 0, r
        log = "\n".join(guest.new_kernel_log())
        assert "sroce: vcan7 carries no IP" in log, log
        lo = guest.run("rdma link add sroceC type sroce netdev lo")
        assert lo.rc != 0, lo
    finally:
        guest.run("ip link del vcan7")
    assert "sroceC" not in guest.run("rdma link show", check=True).stdout


def test_zz_tunnel_deleted_under_device(guest, gre):
    """Deleting the tunnel netdev takes its sroce device with it, with a
    QP open on it."""
    guest.run("ibv_rc_pingpong -d sroceg0 -g %d >/dev/null 2>&1 & sleep 2; "
              "ip link del gre1; ip netns exec peer ip link del gre1; "
              "for i in $(seq 50); do rdma link show | grep -q sroceg || break; "
              "sleep 0.2; done; kill %%1; wait" % gre["sroceg0"], timeout=60)
    out = guest.run("rdma link show; ls /sys/class/infiniband", check=True).stdout
    assert "sroceg" not in out, out
    assert "sroce0" in out and "sroce1" in out, out
