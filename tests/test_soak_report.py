"""Host-side checks of the soak's parsers and verdict (soak/report.py,
tests/guest/kmem.py) on text shaped like the guest's, so a wrong parse
cannot turn a leak or a data error into a PASS.  No guest."""
import importlib.util
import os

import kmem

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("soak_report",
                                               os.path.join(ROOT, "soak", "report.py"))
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

SLABINFO = """slabinfo - version: 2.1
# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>
sroce_qp              12     24   2048   16    8 : tunables    0    0    0 : slabdata      2      2      0
kmalloc-cg-64        100    128     64   64    1 : tunables    0    0    0 : slabdata      2      2      0
kmalloc-1k           300    320   1024   16    4 : tunables    0    0    0 : slabdata     20     20      0
dma-kmalloc-8k         0      0   8192    4    8 : tunables    0    0    0 : slabdata      0      0      0
ovl_inode             88     88    728   22    4 : tunables    0    0    0 : slabdata      4      4      0
"""
MEMINFO = "MemTotal:        2014564 kB\nSlab:              19988 kB\nSUnreclaim:        10140 kB\n"
RESOURCES = ("0: sroce0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0 \n"
             "1: sroce1: pd 3 cq 2 qp 65 cm_id 0 mr 96 ctx 1 srq 0 \n")
STATS = ("link sroce0/1 tx_packets 10 retransmits 2 timeouts 1\n"
         "link sroce1/1 tx_packets 20 retransmits 5 timeouts 0\n")
NETEM = """loss 0.5%
qdisc prio 1: root refcnt 2 bands 2 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1
 Sent 100 bytes 2 pkt (dropped 0, overlimits 0 requeues 0)
qdisc netem 20: parent 1:2 limit 1000 delay 10ms loss 0.5%
 Sent 812 bytes 9 pkt (dropped 441, overlimits 0 requeues 0)
qdisc netem 20: parent 1:2 limit 1000 delay 10ms loss 0.5%
 Sent 812 bytes 9 pkt (dropped 458, overlimits 0 requeues 0)
"""


def test_slabinfo_counts_objects_and_kmalloc_bytes():
    caches = kmem.slabinfo(SLABINFO)
    assert caches["kmalloc-1k"] == kmem.Cache(300, 1024, 16)
    assert "slabinfo" not in caches and "#" not in caches
    assert kmem.kmalloc_bytes(caches) == 100 * 64 + 300 * 1024
    assert kmem.own_caches(caches) == {"sroce_qp": 12}


# Shaped like debugfs slab/kmalloc-192/alloc_traces on 6.1 (slub_debug=U):
# a count and call site, then the stack (stack depot), a blank line after.
ALLOC_TRACES = """\
     12 sroce_create_qp+0x6a/0x3c0 [sroce] waste=96/8 age=4294/4300/4310 pid=120-130 cpus=0-1
        __kmem_cache_alloc_node+0x1c9/0x2e0
        kmalloc_trace+0x26/0x90
        sroce_create_qp+0x6a/0x3c0 [sroce]
        create_qp.part.0+0x61/0x2a0 [ib_core]

      3 kvmalloc_node+0x3b/0x100 age=100 pid=7
        __kmalloc_node+0x4a/0x160
        kvmalloc_node+0x3b/0x100
        sroce_ring_alloc.isra.0+0x2f/0x1a0 [sroce]
        sroce_create_cq+0x80/0x200 [sroce]

      5 kmemdup+0x17/0x40 age=9 pid=1
        __kmalloc+0x4a/0x160
        kmemdup+0x17/0x40
        ib_register_device+0x11/0x80 [ib_core]

    200 neigh_alloc+0x6d/0x2b0 age=10/20/30 pid=0-99 cpus=0-1
        __kmem_cache_alloc_node+0x1c9/0x2e0
        __kmalloc+0x4a/0x160
        neigh_alloc+0x6d/0x2b0
        ___neigh_create+0x5b/0x8c0
        ip_finish_output2+0x20a/0x560
        sroce_skb_send+0x90/0x200 [sroce]

      4 <not-available> age=4294 pid=0

      2 fib6_info_alloc+0x30/0x90 age=11 pid=3
"""


def test_alloc_owners_name_who_kmalloced_each_object():
    owners = kmem.alloc_owners(ALLOC_TRACES)
    assert owners == {
        "sroce_create_qp [sroce]": 12,
        # A wrapper's objects belong to whoever called the wrapper.
        "sroce_ring_alloc.isra.0 [sroce]": 3,
        "ib_register_device [ib_core]": 5,
        # The network stack's own objects stay the kernel's, even when
        # sroce's transmit led there.
        "neigh_alloc": 200,
        "fib6_info_alloc": 2,
    }
    assert kmem.rdma_owned(owners) == {
        "sroce_create_qp [sroce]": 12,
        "sroce_ring_alloc.isra.0 [sroce]": 3,
        "ib_register_device [ib_core]": 5,
    }


def test_alloc_owners_of_an_empty_record():
    assert kmem.alloc_owners("No data\n") == {}
    assert kmem.alloc_owners("") == {}


KFENCE_OBJECTS = """\
kfence-#6: 0xff1100011540e000-0xff1100011540e0ff, size=256, cache=kmalloc-256

allocated by task 133 on cpu 0 at 59.251039s:
 ib_cache_setup_one+0x1a/0x4c0 [ib_core]
 ib_register_device+0x6b0/0x9b0 [ib_core]
 sroce_newlink+0x5ff/0x760 [sroce]

---------------------------------
kfence-#134: 0xff1100011550eff8-0xff1100011550effa, size=3, cache=kmalloc-8

allocated by task 133 on cpu 0 at 59.251039s:
 kstrdup_const+0x43/0x80
 __kernfs_new_node+0x94/0x770
 setup_port+0x38a/0x1770 [ib_core]
---------------------------------
kfence-#17: 0xff11000115424000-0xff110001154240a7, size=168, cache=kernfs_node_cache

allocated by task 1 on cpu 1 at 3.1s:
 __kernfs_new_node+0x4b/0x770
 kernfs_new_node+0x11d/0x250
---------------------------------
kfence-#20: 0xff11000115428000-0xff110001154280ff, size=256, cache=kmalloc-256

allocated by task 133 on cpu 0 at 59.3s:
 ib_cache_setup_one+0x1a/0x4c0 [ib_core]
 ib_register_device+0x6b0/0x9b0 [ib_core]

freed by task 140 on cpu 1 at 80.0s:
 ib_cache_cleanup_one+0x30/0x90 [ib_core]
---------------------------------
"""


def test_kfence_owners_count_the_live_objects_slub_cannot_see():
    assert kmem.kfence_owners(KFENCE_OBJECTS) == {
        "kmalloc-256": {"ib_cache_setup_one [ib_core]": 1},   # not the freed one
        "kmalloc-8": {"__kernfs_new_node": 1},                # past kstrdup_const
        "kernfs_node_cache": {"__kernfs_new_node": 1},
    }
    assert kmem.kfence_owners("") == {}


def test_meminfo_resources_and_statistics():
    assert kmem.meminfo(MEMINFO)["SUnreclaim"] == 10140
    res = kmem.resources(RESOURCES)
    assert res["sroce1"]["qp"] == 65 and res["sroce0"]["mr"] == 0
    stats = kmem.statistics(STATS)
    assert stats == {"sroce0": {"tx_packets": 10, "retransmits": 2, "timeouts": 1},
                     "sroce1": {"tx_packets": 20, "retransmits": 5, "timeouts": 0}}


def test_flat_within_tolerance_and_no_steady_climb():
    assert report.is_flat([10000, 10400, 9900, 10100, 10150])[0]
    # 2% + 4 MiB above the baseline is the limit.
    assert report.is_flat([10000, 14296])[0]
    assert not report.is_flat([10000, 14297])[0]
    # Small, but every minute higher, by more than 1 MiB in all: a leak.
    assert not report.is_flat([10000, 10300, 10600, 10900, 11200])[0]
    assert report.is_flat([10000, 10300, 10600, 10500, 11200])[0]
    assert not report.is_flat([10000])[0]      # one sample proves nothing


def test_netem_drops_per_qdisc():
    assert report.netem_drops(NETEM) == [441, 458]


def _sample(phase, sunreclaim=10140, resources=RESOURCES, statistics=STATS):
    return {"phase": phase, "meminfo": MEMINFO.replace("10140", str(sunreclaim)),
            "slabinfo": SLABINFO, "resources": resources, "statistics": statistics}


def _traffic(**kw):
    t = {"data_errors": 0, "stuck": {}, "completion_errors": {}}
    t.update(kw)
    return t


def test_verdict_passes_a_clean_run_and_fails_each_kind_of_problem():
    clean = [_sample("before"), _sample("minute 1"), _sample("minute 2"),
             _sample("ended"), _sample("settled")]
    assert report.verdict(_traffic(), clean, [])[0] == []
    assert report.verdict(_traffic(data_errors=1), clean, [])[0]
    assert report.verdict(_traffic(stuck={"flow 1": "in flight"}), clean, [])[0]
    assert report.verdict(_traffic(completion_errors={"RC RETRY_EXC": 1}), clean, [])[0]
    assert report.verdict(_traffic(), clean, ["WARNING: CPU: 1 PID: 2"])[0]
    assert report.verdict(None, clean, [])[0]
    grown = clean[:2] + [_sample("minute 2", sunreclaim=20000)] + clean[3:]
    assert any("SUnreclaim" in f for f in report.verdict(_traffic(), grown, [])[0])
    leaked = clean[:4] + [_sample("settled", resources=RESOURCES.replace("qp 65", "qp 66"))]
    assert any("not released" in f for f in report.verdict(_traffic(), leaked, [])[0])


def test_kmemleak_verdict_counts_only_our_leaks_and_a_missing_scan():
    ours = ("unreferenced object 0xffff888012345678 (size 64):\n"
            "  backtrace:\n    kmalloc_trace+0x2a/0x60\n"
            "    sroce_alloc_qp+0x5d/0x300 [sroce]\n")
    theirs = ("unreferenced object 0xffff888087654321 (size 32):\n"
              "  backtrace:\n    kmalloc_trace+0x2a/0x60\n    ext4_fill_super+0x11/0x90\n")
    assert report.kmemleak_failures("") == []
    assert report.kmemleak_failures(theirs) == []
    fails = report.kmemleak_failures(theirs + ours)
    assert len(fails) == 1 and "1 leak(s)" in fails[0] and "sroce_alloc_qp" in fails[0]
    assert report.kmemleak_failures(ours + ours)[0].startswith("kmemleak: 2 leak(s)")
    assert "no kmemleak scan" in report.kmemleak_failures(None)[0]


def test_debug_kernel_allows_the_kasan_quarantine_and_no_more():
    # MEMINFO: MemTotal 2014564 kB, so the quarantine's bound is 62955 kB.
    def run(end_kb):
        return [_sample("before"), _sample("minute 1"), _sample("minute 2"),
                _sample("minute 3", sunreclaim=end_kb), _sample("ended"),
                _sample("settled")]
    filled = run(10140 + 40000)
    assert any("SUnreclaim" in f for f in report.verdict(_traffic(), filled, [])[0])
    assert report.verdict(_traffic(), filled, [], debug_kernel=True)[0] == []
    beyond = run(10140 + 70000)
    fails = report.verdict(_traffic(), beyond, [], debug_kernel=True)[0]
    assert any("SUnreclaim" in f and "KASAN quarantine 62955 kB" in f for f in fails), fails


def test_odp_flows_must_page_and_the_race_must_pass():
    """ODP flows that never faulted or never lost a page tested nothing;
    the race's own verdict line decides for it."""
    paged = STATS.replace("timeouts 1", "timeouts 1 odp_page_faults 40 odp_invalidations 9")
    ended = [_sample("before"), _sample("minute 1"), _sample("minute 2"),
             _sample("ended", statistics=paged), _sample("settled", statistics=paged)]
    idle = [_sample("before"), _sample("minute 1"), _sample("minute 2"),
            _sample("ended"), _sample("settled")]
    odp = _traffic(odp_flows=4)
    race_ok = "ok: race: 239 of 239 WRITEs/READs succeeded\n0 checks failed\n"
    race_bad = "FAILED: race: 0 of 1 WRITEs/READs succeeded (then no completion)\n1 checks failed\n"
    assert report.verdict(odp, ended, [], odp_race=race_ok)[0] == []
    assert any("invalidations" in f for f in report.verdict(odp, idle, [], odp_race=race_ok)[0])
    assert report.verdict(_traffic(), idle, [])[0] == []     # no ODP flows, no race
    assert any("ODP race" in f for f in report.verdict(odp, ended, [], odp_race=race_bad)[0])
    assert any("ODP race" in f for f in report.verdict(odp, ended, [], odp_race="")[0])
