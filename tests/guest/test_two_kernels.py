"""Two hosts, two kernels, a real NIC driver between them: a mixed
cluster.  Debian 12's kernel (Linux 6.1) and sid's (Linux 7.2) boot as
two guests, each with one emulated virtio-net NIC, joined by a qemu wire
(scripts/vm-run --cable): veth0 and sroce0 at 198.51.100.1 on 6.1, veth1
and sroce1 at 198.51.100.2 on 7.2, each in its guest's initial
namespace.  Every other guest test runs inside one kernel, where both
ends share the module's code, its compat choices and the kernel's
network stack; here each end's packets are built, sent and received by a
different kernel, through a driver's transmit ring, interrupts and NAPI.

What runs across: data-checked RC ping-pong over IPv4 (each kernel the
server once) and IPv6, UD ping-pong, RDMA WRITE, READ, SEND and atomics
with perftest (each kernel the requester once), rping through rdma_cm
(address and route resolution over the driver), interop with the other
kernel's rxe both ways, a full transmit ring, which must be a pause and
never a loss (tx_queue_stopped, tx_resent, no timeout), a bad wire (loss,
corruption) costing no byte, and ECN marks that
the other kernel turns into CNPs for the sender.

virtio-net: qemu's e1000e loses a frame now and then under load (see
test_emulated_nics.py), which would make the full ring's "no timeout"
the emulator's to break.  One vCPU a guest: two guests on this two-core
host, each with two vCPUs, are four threads on two cores, and a vCPU
preempted while it holds a guest lock stalls its sibling.  The module
runs after every other (runs_last): sid's build is done by then, and no
guest of the pool runs beside these two."""
import pytest

from harness import Guest, GuestDied
from verbs_apps import (CLIENT_IP, CLIENT_IP6, SERVER_IP, SERVER_IP6, SLOW_PATH_DCQCN,
                        ecn_bottleneck_command, gid_index, impair_data_packets,
                        link_counters, nic_losses, until_cm_listens)
import conftest

pytestmark = pytest.mark.runs_last
# Deselected from a run that does not build both (tests/conftest.py).
NEEDS_RELEASES = ("bookworm", "sid")
# Its two guests have the host's two cores: nothing of the suite's runs
# beside them (tests/hostshare.py).
HOST_ALONE = True

WIRE = "virtio-net-pci"
# (release, the kernel series it must boot) for each end of the wire.
ENDS = (("bookworm", "6.1."), ("sid", "7.2."))
IP = (CLIENT_IP, SERVER_IP)
IP6 = (CLIENT_IP6, SERVER_IP6)
SERVER_LOG = "/root/two-kernels-server"


class End:
    """One host of the pair: its guest, the end of the wire it holds
    (0 or 1), and the device that end carries now (sroceN, or rxeN while
    an interop test runs)."""

    def __init__(self, guest, end):
        self.guest, self.end = guest, end
        self.dev = "sroce%d" % end

    @property
    def ip(self):
        return IP[self.end]

    def gid(self, ip=None):
        return gid_index(self.guest, self.dev, ip or self.ip)

    def use(self, kind):
        """Replaces this end's device with `kind` (sroce or rxe) on the same
        NIC: the two cannot share UDP port 4791, so the other unloads."""
        old, new = ("rdma_rxe", "sroce") if kind == "sroce" else ("sroce", "rdma_rxe")
        dev = "%s%d" % ("sroce" if kind == "sroce" else "rxe", self.end)
        self.guest.run("rmmod %s && modprobe %s && rdma link add %s type %s netdev veth%d"
                       % (old, new, dev, kind, self.end), check=True)
        self.dev = dev


@pytest.fixture(scope="module")
def ends(request, tmp_path_factory):
    # The guest an earlier module left for reuse: nothing after this module
    # asks for one, and a third guest would share the two cores.
    request.config._sroce_guests.close()
    for release, _ in ENDS:
        conftest.wait_for_release_build(release)
    wire = tmp_path_factory.mktemp("wire")
    guests = []
    for end, (release, _) in enumerate(ENDS):
        out = tmp_path_factory.mktemp("guest-two-kernels-%s" % release)
        conftest.GUEST_DIRS.append(str(out))
        guests.append(Guest(out, timeout=conftest.GUEST_LIFETIME, distro=release,
                            smp=1, mem=1536, wire=WIRE, cable=(str(wire), end)))
    try:
        # One after the other: a guest's vm-run goes when the thread that
        # started it ends (setpriv --pdeathsig), so no boot threads.
        for g in guests:
            g.start()
        yield [End(g, end) for end, g in enumerate(guests)]
    except GuestDied as e:
        pytest.fail(str(e), pytrace=False)
    finally:
        for g in guests:
            g.stop()


@pytest.fixture(autouse=True)
def _kernel_logs_clean(ends):
    """Both kernels' logs, after each test (the guest fixture's check)."""
    yield
    conftest.fail_on_kernel_problems([e.guest for e in ends])


def across(server, server_cmd, client, client_cmd, timeout=180, port=18515):
    """Runs `server_cmd` on one host and, once it listens (on TCP `port`,
    or as an rdma_cm ID when port is None), `client_cmd` on the other;
    returns (both exited 0, both outputs)."""
    wait = ("for i in $(seq 150); do ss -Hltn 'sport = :%d' | grep -q . && break; "
            "sleep 0.2; done" % port if port else until_cm_listens())
    server.guest.run(
        "rm -f {log}.rc; setsid sh -c 'timeout {t} {cmd} >{log}.out 2>&1; "
        "echo $? >{log}.rc' </dev/null >/dev/null 2>&1 & {wait}".format(
            log=SERVER_LOG, t=timeout, cmd=server_cmd, wait=wait), check=True)
    c = client.guest.run("timeout %d %s" % (timeout, client_cmd), timeout=timeout + 30)
    s = server.guest.run(
        "for i in $(seq 300); do [ -e {log}.rc ] && break; sleep 0.1; done; "
        "cat {log}.out; exit $(cat {log}.rc 2>/dev/null || echo 124)".format(log=SERVER_LOG),
        timeout=60)
    out = "--- server (%s)\n%s\n--- client (%s)\n%s" % (
        server.dev, s.output, client.dev, c.output)
    return s.rc == 0 and c.rc == 0, out


def test_each_end_is_its_own_kernel_on_virtio_net(ends):
    for e, (_, series) in zip(ends, ENDS):
        out = e.guest.run("uname -r; basename $(readlink /sys/class/net/veth%d/device/driver); "
                          "rdma link show" % e.end, check=True).stdout.splitlines()
        assert out[0].startswith(series), out
        assert out[1] == "virtio_net", out
        assert "link %s/1 state ACTIVE" % e.dev in out[2], out


@pytest.mark.parametrize("server_end, family", [(1, "ipv4"), (0, "ipv4"), (1, "ipv6")],
                         ids=["7.2_serves-ipv4", "6.1_serves-ipv4", "7.2_serves-ipv6"])
def test_verified_rc_pingpong(ends, server_end, family):
    """Data-checked RC messages of three packets each (4 KiB at MTU 1500),
    over each end's IPv4 or IPv6 GID."""
    server, client = ends[server_end], ends[1 - server_end]
    ip = (lambda e: IP6[e.end]) if family == "ipv6" else (lambda e: e.ip)
    ok, out = across(server, "ibv_rc_pingpong -d %s -g %d -c -n 100 -s 4096"
                     % (server.dev, server.gid(ip(server))),
                     client, "ibv_rc_pingpong -d %s -g %d -c -n 100 -s 4096 %s"
                     % (client.dev, client.gid(ip(client)), server.ip))
    assert ok, out
    assert out.count("100 iters in") == 2, out


def test_verified_ud_pingpong(ends):
    server, client = ends
    ok, out = across(server, "ibv_ud_pingpong -d %s -g %d -c -n 100 -s 1024"
                     % (server.dev, server.gid()),
                     client, "ibv_ud_pingpong -d %s -g %d -c -n 100 -s 1024 %s"
                     % (client.dev, client.gid(), server.ip))
    assert ok, out


PERFTEST = [("ib_write_bw", "-s 65536 -n 100"), ("ib_read_bw", "-s 65536 -n 100"),
            ("ib_send_bw", "-s 65536 -n 100"), ("ib_atomic_bw", "-n 500")]


@pytest.mark.parametrize("requester", [0, 1], ids=["6.1_requests", "7.2_requests"])
@pytest.mark.parametrize("app, args", PERFTEST, ids=[p[0] for p in PERFTEST])
def test_perftest(ends, app, args, requester):
    """Each operation with each kernel as the requester (perftest's
    client) and the other as the responder."""
    client, server = ends[requester], ends[1 - requester]
    ok, out = across(server, "%s -d %s -x %d -F %s" % (app, server.dev, server.gid(), args),
                     client, "%s -d %s -x %d -F %s %s"
                     % (app, client.dev, client.gid(), args, server.ip))
    assert ok, out


def test_rdma_cm_resolves_and_verifies(ends):
    """rping: address and route resolution across the wire (ARP over the
    driver), then READs and WRITEs with every byte checked."""
    server, client = ends[1], ends[0]
    ok, out = across(server, "rping -s -a %s -C 20 -S 4096 -V" % server.ip,
                     client, "rping -c -a %s -C 20 -S 4096 -V" % server.ip, port=None)
    assert ok, out


INTEROP = [("ibv_rc_pingpong", "-g", "-s 4096 -n 100 -c"),
           ("ib_write_bw", "-x", "-s 65536 -n 100 -F"),
           ("ib_read_bw", "-x", "-s 65536 -n 100 -F")]


@pytest.mark.parametrize("rxe_end", [1, 0], ids=["sroce6.1-rxe7.2", "rxe6.1-sroce7.2"])
def test_interop_with_the_other_kernels_rxe(ends, rxe_end):
    """sroce on one kernel against rxe on the other, each program with
    sroce serving once and rxe once: the two share no code and here no
    kernel either."""
    rxe, sroce = ends[rxe_end], ends[1 - rxe_end]
    rxe.use("rxe")
    try:
        for app, gflag, args in INTEROP:
            for server, client in ((sroce, rxe), (rxe, sroce)):
                ok, out = across(server, "%s -d %s %s %d %s"
                                 % (app, server.dev, gflag, server.gid(), args),
                                 client, "%s -d %s %s %d %s %s"
                                 % (app, client.dev, gflag, client.gid(), args, server.ip))
                assert ok, "%s, %s serving:\n%s" % (app, server.dev, out)
    finally:
        rxe.use("sroce")


def wire_losses(ends):
    """Packets both NICs have lost (verbs_apps.nic_losses)."""
    return sum(nic_losses(e.guest, "veth%d" % e.end) for e in ends)


def counters(end):
    return link_counters(end.guest, end.dev)


def counter_deltas(ends, before):
    """Each end's port counters now, less `before` (counters() of each)."""
    return [{k: v - b.get(k, 0) for k, v in counters(e).items()}
            for e, b in zip(ends, before)]


@pytest.mark.parametrize("sender", [0, 1], ids=["6.1_sends", "7.2_sends"])
def test_a_full_transmit_ring_is_a_pause_not_a_loss(ends, sender):
    """Eight QPs of 64 KiB WRITEs overrun the sender's virtio-net ring: its
    queue stops, sroce keeps what it could not send and resends it when
    the queue wakes, with the QPs' ACK timers frozen meanwhile, so no
    local ACK timeout and no retransmission on either kernel.  The queue
    must have stopped, or this tested nothing; the wire must have lost
    nothing, or a timeout would be the wire's.

    The ACK timeout is 1.07 s (-u 18).  The timers freeze while the queue
    is stopped, not while a packet waits in the queue discipline (1,000
    frames) and the ring in front of a receiver that is a second guest on
    one vCPU: this wire carries ~8 MB/s, so those ~1.3 MB take ~160 ms
    to drain when both guests run, and more when the host runs the other
    guest.  At 268 ms (test_emulated_nics.py's, one guest) the first run
    had one timeout from 6.1 with no frame lost and no duplicate at the
    responder: an ACK late, not a packet lost."""
    client, server = ends[sender], ends[1 - sender]
    losses = wire_losses(ends)
    before = [counters(e) for e in ends]
    args = "-F -q 8 -u 18 -s 65536 -n 200"
    ok, out = across(server, "ib_write_bw -d %s -x %d %s" % (server.dev, server.gid(), args),
                     client, "ib_write_bw -d %s -x %d %s %s"
                     % (client.dev, client.gid(), args, server.ip), timeout=600)
    assert ok, out
    losses = wire_losses(ends) - losses
    delta = counter_deltas(ends, before)
    print("frames lost:", losses, "\n6.1:", {k: v for k, v in delta[0].items() if v},
          "\n7.2:", {k: v for k, v in delta[1].items() if v})
    assert losses == 0, "the wire lost %d frames: this test needs a lossless one" % losses
    assert delta[sender]["tx_queue_stopped"] > 0, delta[sender]
    assert delta[sender]["tx_resent"] > 0, delta[sender]
    for d in delta:
        assert d["timeouts"] == 0 and d["retransmits"] == 0, d


# Loss (each kernel's retransmit timer and NAK path) and corruption (each
# kernel's ICRC engine checking the other's: on 6.1 one of sroce's own
# (crc_simd.c; 6.1's crc32_le() is the generic one), on 7.2 the kernel's
# accelerated crc32_le()).  Duplicates and
# reordering meet kernel/proto's sequence logic, the same code on every
# kernel, which test_lossy_links.py runs on each release.
IMPAIRMENTS = {"loss": "loss 1%", "corrupt": "corrupt 0.1%"}


@pytest.mark.parametrize("name", sorted(IMPAIRMENTS))
def test_a_bad_wire_costs_no_byte(ends, name):
    """netem on both NICs' egress, on data packets (test_lossy_links.py's
    impairments): 16 MiB each way in data-checked RC round trips of
    64 KiB, every byte right, and each kernel's recovery shows in its
    counters: retransmits after loss, ICRC errors caught after corruption
    (each end checks the other kernel's ICRC)."""
    for e in ends:
        impair_data_packets(e.guest, "veth%d" % e.end, IMPAIRMENTS[name])
    before = [counters(e) for e in ends]
    try:
        server, client = ends[1], ends[0]
        ok, out = across(server, "ibv_rc_pingpong -d %s -g %d -s 65536 -n 256 -c"
                         % (server.dev, server.gid()),
                         client, "ibv_rc_pingpong -d %s -g %d -s 65536 -n 256 -c %s"
                         % (client.dev, client.gid(), server.ip), timeout=600)
    finally:
        for e in ends:
            e.guest.run("tc qdisc del dev veth%d root" % e.end)
    delta = counter_deltas(ends, before)
    print(name, "\n6.1:", delta[0], "\n7.2:", delta[1])
    assert ok, out
    assert out.count("256 iters in") == 2, out
    for d in delta:
        assert d["completion_errors"] == 0, d
    both = {k: delta[0][k] + delta[1][k] for k in delta[0]}
    counter = {"loss": "retransmits", "corrupt": "rx_icrc_errors"}[name]
    assert both[counter] > 0, delta


# test_congestion.py's bottleneck, with DCQCN's timers for a slow path.
BOTTLENECK_KBIT = 10_000
CC = "/sys/class/infiniband/%s/cc/%s"


@pytest.mark.parametrize("sender", [0, 1], ids=["6.1_sends", "7.2_sends"])
def test_ecn_marks_slow_the_other_kernels_sender(ends, sender):
    """DCQCN between kernels: the sender's egress is a 10 Mbit/s RED queue
    that CE-marks; the receiver (the other kernel) turns the marks into
    CNPs, which reach the sender's DCQCN (cnp_rcvd), while every WRITE
    still completes.  (test_congestion.py measures what DCQCN then does to
    the rates, in one guest with the host alone.)"""
    client, server = ends[sender], ends[1 - sender]
    dev = "veth%d" % client.end
    settings = {}
    for name in SLOW_PATH_DCQCN:
        settings[name] = client.guest.run("cat " + CC % (client.dev, name),
                                          check=True).stdout.strip()
    slow_timers = " && ".join("echo %s > %s" % (v, CC % (client.dev, k))
                              for k, v in SLOW_PATH_DCQCN.items())
    client.guest.run(ecn_bottleneck_command(dev, BOTTLENECK_KBIT) + " && " + slow_timers,
                     check=True)
    before = [counters(e) for e in ends]
    try:
        args = "-F -q 2 -u 19 -s 65536 -D 5"
        ok, out = across(server, "ib_write_bw -d %s -x %d %s" % (server.dev, server.gid(), args),
                         client, "ib_write_bw -d %s -x %d %s %s"
                         % (client.dev, client.gid(), args, server.ip), timeout=240)
    finally:
        client.guest.run("tc qdisc del dev %s root; " % dev +
                         "; ".join("echo %s > %s" % (v, CC % (client.dev, k))
                                   for k, v in settings.items()))
    delta = counter_deltas(ends, before)
    print("sender:", delta[sender], "\nreceiver:", delta[1 - sender])
    assert ok, out
    assert delta[1 - sender]["ecn_marked_rcvd"] > 0, delta
    assert delta[1 - sender]["cnp_sent"] > 0, delta
    assert delta[sender]["cnp_rcvd"] > 0, delta
