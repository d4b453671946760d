"""The edges of a QP's life that well-behaved libraries never reach.

Hostile user space: a process that writes its shared ring indices
itself, as any local user of /dev/infiniband/uverbs* can.

The kernel owns its own copy of every index and trusts nothing it reads
from shared memory: an index that contradicts what the kernel knows fails
that QP (error state, IBV_EVENT_QP_FATAL, the WQEs the kernel holds
completed with errors) within a bounded time, and nothing else (the
doorbell returns at once, the CPU never stalls: the kernel-log check
after every test catches soft lockups and RCU stalls).

Transitions to the error state that the consumer asks for (every
rdma_disconnect and ib_drain_qp makes one) are carried out quietly, as
on hardware: the WQEs are flushed and no asynchronous event is raised
(UCX logs a "catastrophic error" for each one it gets).  RESET to ERR is
no transition at all (ib_core's state table): EINVAL, as on ConnectX.
"""

import pytest

from verbs_apps import CLIENT_IP, NOBODY, gid_index, guest_tool

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): its races (a CQ resize against
# the poller's unwatch, a destroy against a thread mapping the ring) need
# a second CPU to happen at all.
GUEST_CPUS = 2



def run_tool(guest, scenario, tool="qp_edges"):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    # Unprivileged, as an attacker would be; bounded well below the soft
    # lockup detector's 20 s so a stalled kernel shows up as a timeout too.
    tool = guest_tool(guest, tool)
    r = guest.run("%s%s sroce0 %d %s" % (NOBODY, tool, g, scenario), timeout=60)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0, r
    assert "0 checks failed" in r.stdout, r


@pytest.mark.parametrize("scenario", ["sq-behind-fetch", "sq-past-ring", "rq-behind"])
def test_bogus_ring_index_fails_only_that_qp(guest, scenario):
    run_tool(guest, scenario)
    # The device still works for everybody else.
    r = guest.run("ibv_devinfo -d sroce0", check=True)
    assert "PORT_ACTIVE" in r.stdout


@pytest.mark.parametrize("scenario", ["modify-to-err", "recv-mid-message", "reset-to-err",
                                      "flush-access"])
def test_requested_error_state(guest, scenario):
    run_tool(guest, scenario)


def test_sqd_drains_and_tells(guest):
    """RTS -> SQD with a message on the wire: the QP finishes it, raises
    IBV_EVENT_SQ_DRAINED, holds what is queued until RTS again."""
    run_tool(guest, "sqd-drain")


def test_cq_overflow_fails_the_qp_that_lost_a_completion(guest):
    """A send CQ never polled overflows: CQ_ERR, and its QP goes to ERR
    with QP_FATAL while its peer keeps running."""
    run_tool(guest, "cq-overflow")


def test_cq_resize_counts_what_was_just_posted(guest):
    """Shrinking a CQ below the completions of sends just posted is EINVAL
    even while the send queue poller has not taken them: rdma-core's
    test_resize_cq failed 1 time in 40 on sroce/bookworm without that."""
    run_tool(guest, "cq-resize-posted")


def test_srq_qp_in_error_raises_last_wqe_reached(guest):
    """A QP receiving through an SRQ raises Last WQE Reached when it enters
    ERR, asked or failing (UCX's rc_verbs waits for it before destroying a
    QP: 8 of its gtests failed without it, as on rxe; ib_drain_qp() waits
    10 s for it since 6.10), and leaves the SRQ's receives to others."""
    run_tool(guest, "srq-last-wqe")


def test_queues_report_what_their_cqs_hold(guest):
    """What an SRQ, RQ or SQ reports as max_wr never exceeds a CQ made for
    the same request: UCX fills its SRQ to the reported max_wr with a CQ
    of its own request, and UCX's pending_fairness gtest died of a CQ
    overflow about one run in ten when an SRQ made for 4095 reported its
    4096 slots."""
    run_tool(guest, "caps-fit-cqs")


def test_write_with_immediate_reports_its_length(guest):
    """The receive an RDMA WRITE with immediate consumes completes with the
    WRITE's length as byte_len (ConnectX and rxe do; libfabric's fi_cq_data
    checks it): one packet, several, and none."""
    run_tool(guest, "write-imm-length")


def test_an_mr_at_the_top_of_the_address_space(guest):
    """An MR ending at 2^64 (rxe's 7.2 fixed sums of an address and a
    length that wrapped there, docs/bug-classes-2026.md class 4): WRITE,
    READ and an atomic that end exactly at 2^64 succeed; a WRITE that runs
    past it, or starts below the MR, fails with a remote access error and
    changes nothing."""
    run_tool(guest, "iova-top")


def test_a_deregistered_mr_is_not_used_again(guest):
    """An lkey each side has just used for every packet of a 4 KiB SEND,
    its MR then deregistered: a SEND from it fails with a local protection
    error, and so does a receive into it (the kernel keeps the MR it last
    found across a QP's packets, kernel/mr.h struct sroce_mr_cache; one
    freed must never be reached through it: under the debug kernel KASAN
    would report the use)."""
    run_tool(guest, "lkey-after-dereg")


def test_a_gone_ring_offset_maps_no_more(guest):
    """A CQ's, an SRQ's and a QP's (send and receive) ring mmap offsets
    once the queue is destroyed, or the CQ resized (rxe's 7.2 mmap
    use-after-free, docs/bug-classes-2026.md class 3): a mapping made
    before stays the process's own memory, the offset is refused, destroys
    under a thread mapping it in a loop answer each mmap, and
    the device works afterwards (the kernel-log check after every test
    catches what the kernel says)."""
    run_tool(guest, "stale-mmap")


def test_a_corrupt_receive_wqe_loses_no_receive(guest):
    """A receive WQE whose SGE count the process corrupted fails its QP
    (QP_FATAL), and the flush completes every receive still posted, the
    corrupt one too: before, the flush stopped at it and every receive
    behind it was lost."""
    run_tool(guest, "rq-bad-wqe")


def test_a_corrupt_srq_wqe_fails_the_srq_once(guest):
    """An SRQ receive WQE whose SGE count the process corrupted: the QP
    that meets it fails, and the SRQ with it (IBV_EVENT_SRQ_ERR once, what
    a NIC raises on an SRQ catastrophic error, where sroce used to fail
    every QP reaching it with no word about the SRQ); a second QP on the
    SRQ fails at its next SEND; the receives before it completed, none
    after (an SRQ is not flushed when a QP fails)."""
    run_tool(guest, "srq-bad-wqe")


def test_wqes_changed_under_the_kernel_complete_once(guest):
    """SQ and RQ slots whose SGE counts and lengths a thread keeps flipping
    to 2^32 - 1 while the kernel takes them (rxe's 7.2 TOCTOU heap
    overflow, docs/bug-classes-2026.md class 2): every WR completes once,
    with success or an error, and the kernel-log check after the test
    finds nothing."""
    run_tool(guest, "ring-flip")


def test_srq_wqes_changed_under_the_kernel_lose_nothing(guest):
    """The same flipping on an SRQ's slots while two QPs receive from it
    (rxe's 7.2 TOCTOU was in its SRQ copy too): every send completes once,
    none with success whose receive did not, the SRQ fails at most once,
    and the kernel-log check finds nothing."""
    run_tool(guest, "srq-flip")


def test_srq_resize_keeps_pending_receives(guest):
    """An SRQ grows with receives pending, refuses to shrink below them,
    and every receive completes in order afterwards."""
    run_tool(guest, "srq-resize")


def test_ack_leaves_when_the_receiver_is_destroyed_at_once(guest):
    """A receiver that destroys its QP as soon as its last receive
    completes (ibv_rc_pingpong's server does) must not take the ACK for
    that message with it: the sender's last send would fail after its
    retries (against rxe in CI, the sender hung)."""
    run_tool(guest, "destroy-after-last-recv")


@pytest.mark.parametrize("how", ["destroy", "reset"])
def test_a_gone_qp_leaves_no_completions(guest, how):
    """A QP destroyed or moved to RESET while its CQ holds completions of
    it and of another QP: the CQ then gives the other QP's, in order, and
    none of the gone one's, as ConnectX and hns do in the same call.
    libfabric 2.1's ofi_rxm drains its CQ after closing an endpoint and
    reposted a receive found there on the closed one (fabtests'
    fi_rma_bw and fi_rdm_tagged_pingpong segfaulted at teardown on sroce,
    docs/peers.md)."""
    run_tool(guest, how, tool="gone_qp_cqes")
