"""The guest kernel-log check (harness.kernel_problems): which lines fail a
test, and that the one tolerated upstream lockdep report is let through
only whole, only with its own frames and only without sroce in it."""
import harness  # tests/guest, on sys.path through conftest

NVMET_REPORT = """\
======================================================
WARNING: possible circular locking dependency detected
6.1.0-sroce-debug #1 Not tainted
------------------------------------------------------
nvmetcli/812 is trying to acquire lock:
ffff888104f1c3b0 (&id_priv->handler_mutex){+.+.}-{3:3}, at: rdma_destroy_id+0x17/0x40 [rdma_cm]

but task is already holding lock:
ffffffffc0a4e2d0 (nvmet_config_sem){++++}-{3:3}, at: nvmet_port_subsys_drop_link+0x4c/0x300 [nvmet]

which lock already depends on the new lock.

the existing dependency chain (in reverse order) is:

-> #1 (nvmet_config_sem){++++}-{3:3}:
       down_read+0x9d/0x460
       nvmet_find_get_subsys+0x36/0x170 [nvmet]
       nvmet_execute_io_connect+0x1b3/0x6f0 [nvmet]
       nvmet_rdma_handle_command+0x15d/0x2f0 [nvmet_rdma]
       nvmet_rdma_cm_handler+0x520/0x8c0 [nvmet_rdma]
       cma_ib_handler+0x176/0x490 [rdma_cm]

-> #0 (&id_priv->handler_mutex){+.+.}-{3:3}:
       __mutex_lock+0x13d/0x12f0
       rdma_destroy_id+0x17/0x40 [rdma_cm]
       nvmet_rdma_disable_port+0x2a/0x50 [nvmet_rdma]
       nvmet_rdma_remove_port+0xe/0x20 [nvmet_rdma]
       nvmet_disable_port+0x88/0xf0 [nvmet]
       nvmet_port_subsys_drop_link+0x241/0x300 [nvmet]

stack backtrace:
CPU: 1 PID: 812 Comm: nvmetcli Not tainted 6.1.0-sroce-debug #1
Call Trace:
 <TASK>
 dump_stack_lvl+0x5b/0x77
 check_noncircular+0x25f/0x2f0
 </TASK>
"""


def lines(text):
    return text.splitlines()


def test_the_nvmet_rdma_report_is_tolerated_whole():
    log = ["sroce: sroce0 on veth0"] + lines(NVMET_REPORT) + ["nvmet: done"]
    skip, names = harness.tolerated_reports(log)
    assert names == [harness.UPSTREAM_LOCKDEP_REPORTS[0][0]]
    # From lockdep's WARNING line (after its rule) to the end of the trace.
    assert skip == set(range(2, 1 + len(lines(NVMET_REPORT))))


def test_a_report_that_names_sroce_is_not_tolerated():
    text = NVMET_REPORT.replace("cma_ib_handler+0x176/0x490 [rdma_cm]",
                                "sroce_recv+0x76/0x90 [sroce]")
    assert harness.tolerated_reports(lines(text)) == (set(), [])


def test_an_incomplete_report_is_not_tolerated():
    text = NVMET_REPORT[:NVMET_REPORT.index(" </TASK>")]
    assert harness.tolerated_reports(lines(text)) == (set(), [])


def test_another_chain_is_not_tolerated():
    text = NVMET_REPORT.replace("nvmet_rdma_disable_port", "nvmet_tcp_remove_port")
    assert harness.tolerated_reports(lines(text)) == (set(), [])


def test_the_check_flags_warnings_and_lockdep_reports():
    bad = ["WARNING: CPU: 0 PID: 1 at kernel/sroce/qp.c:10 sroce_qp_destroy",
           "BUG: KASAN: slab-use-after-free in sroce_recv",
           "WARNING: possible circular locking dependency detected",
           "kmemleak: Not scanning unknown object at 0xffff"]
    good = ["sroce: sroce0 on veth0",
            "kmemleak: Kernel memory leak detector initialized (mem pool available: 15)",
            "kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)"]
    assert [l for l in bad if harness.BAD_KERNEL_LOG.search(l)] == bad
    assert [l for l in good if harness.BAD_KERNEL_LOG.search(l)] == []
