"""The guest kernel-log check (harness.kernel_problems): which lines fail a
test, and that the tolerated upstream reports (one lockdep, one KASAN) are
let through only whole, only with their own frames and only without sroce
in them."""
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


# The first of the reports test_iser's link deletion while logged in drew
# from ib_isert under the debug kernel (6.1.192), as /dev/kmsg gives them.
ISERT_REPORT = """\
BUG: KASAN: use-after-free in isert_free_conn+0x6c/0xd0 [ib_isert]
Write of size 4 at addr ff11000006035268 by task iscsi_ttx/338

CPU: 0 PID: 338 Comm: iscsi_ttx Tainted: G           O       6.1.192-sroce-debug #2 
Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 0.1 11/11/2019
Call Trace:
 <TASK>
 dump_stack_lvl+0x4c/0x63
 print_report+0x181/0x495
 kasan_report+0xd7/0x180
 kasan_check_range+0x13a/0x1c0
 isert_free_conn+0x6c/0xd0 [ib_isert]
 iscsit_close_connection+0x8ba/0x22c0 [iscsi_target_mod]
 iscsit_take_action_for_connection_exit+0x1b2/0x360 [iscsi_target_mod]
 iscsi_target_tx_thread+0x381/0x590 [iscsi_target_mod]
 kthread+0x291/0x340
 ret_from_fork+0x22/0x30
 </TASK>

Allocated by task 25:
 kasan_save_stack+0x2f/0x60
 kasan_set_track+0x21/0x30
 __kasan_kmalloc+0xa9/0xb0
 isert_cma_handler+0x210/0x2730 [ib_isert]
 cma_cm_event_handler+0xad/0x2e0 [rdma_cm]
 cma_ib_req_handler+0x11a1/0x4cc0 [rdma_cm]
 cm_process_work+0x41/0x3a0 [ib_cm]
 cm_work_handler+0x456f/0x8ed0 [ib_cm]
 process_one_work+0x894/0x1330
 worker_thread+0xf7/0x1270
 kthread+0x291/0x340
 ret_from_fork+0x22/0x30

Freed by task 224:
 kasan_save_stack+0x2f/0x60
 kasan_set_track+0x21/0x30
 kasan_save_free_info+0x2a/0x50
 ____kasan_slab_free+0x169/0x1c0
 slab_free_freelist_hook+0xc3/0x200
 __kmem_cache_free+0xa1/0x190
 isert_cma_handler+0x126e/0x2730 [ib_isert]
 cma_cm_event_handler+0xad/0x2e0 [rdma_cm]
 cma_process_remove+0x102/0x660 [rdma_cm]
 cma_remove_one+0x148/0x2f0 [rdma_cm]
 remove_client_context+0xa4/0xf0 [ib_core]
 disable_device+0x125/0x240 [ib_core]
 __ib_unregister_device+0x7b/0x160 [ib_core]
 ib_unregister_work+0x10/0x20 [ib_core]
 process_one_work+0x894/0x1330
 worker_thread+0xf7/0x1270
 kthread+0x291/0x340
 ret_from_fork+0x22/0x30

Last potentially related work creation:
 kasan_save_stack+0x2f/0x60
 __kasan_record_aux_stack+0xb6/0xd0
 insert_work+0x43/0x2e0
 __queue_work+0x54e/0xf40
 queue_work_on+0x6f/0x80
 isert_wait_conn+0x5eb/0xbb0 [ib_isert]
 iscsit_close_connection+0x363/0x22c0 [iscsi_target_mod]
 iscsit_take_action_for_connection_exit+0x1b2/0x360 [iscsi_target_mod]
 iscsi_target_tx_thread+0x381/0x590 [iscsi_target_mod]
 kthread+0x291/0x340
 ret_from_fork+0x22/0x30

The buggy address belongs to the object at ff11000006034000
 which belongs to the cache kmalloc-8k of size 8192
The buggy address is located 4712 bytes inside of
 8192-byte region [ff11000006034000, ff11000006036000)

==================================================================
"""


def lines(text):
    return text.splitlines()


def test_the_nvmet_rdma_report_is_tolerated_whole():
    log = ["sroce: sroce0 on veth0"] + lines(NVMET_REPORT) + ["nvmet: done"]
    skip, names = harness.tolerated_reports(log)
    assert names == [harness.UPSTREAM_REPORTS[0][0]]
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


def test_the_isert_use_after_free_is_tolerated_whole():
    log = (["iser: iser_event_handler: async event port active (9)"] +
           lines(ISERT_REPORT) + lines(ISERT_REPORT) + ["sroce: unloaded"])
    skip, names = harness.tolerated_reports(log)
    assert names == [harness.UPSTREAM_REPORTS[1][0]] * 2
    assert skip == set(range(1, 1 + 2 * len(lines(ISERT_REPORT))))
    assert not [l for i, l in enumerate(log)
                if i not in skip and harness.BAD_KERNEL_LOG.search(l)]


def test_a_use_after_free_of_another_free_is_not_tolerated():
    """Freed by sroce, or by anything but ib_isert's device-removal
    path: reported, whatever touched it afterwards."""
    for old, new in (("cma_process_remove+0x102/0x660 [rdma_cm]",
                      "sroce_destroy_qp+0x10/0x90 [sroce]"),
                     ("cma_process_remove", "cma_destroy_id"),
                     ("isert_cma_handler+0x126e", "nvmet_rdma_cm_handler+0x126e")):
        text = ISERT_REPORT.replace(old, new)
        assert text != ISERT_REPORT
        assert harness.tolerated_reports(lines(text)) == (set(), []), new


def test_an_unfinished_kasan_report_is_not_tolerated():
    text = ISERT_REPORT[:ISERT_REPORT.rindex("\n=") + 1]
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
