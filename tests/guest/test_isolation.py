"""Isolation: what one verbs user can and cannot do to memory and objects
that are not its own.

Remote accesses with a wrong rkey, outside the MR, without the right or
into another PD must end in a remote access error and leave the target
bytes alone; rkeys must not be guessable from the previous registration;
an unprivileged user may use the device (as on hardware) but not create a
link; one process cannot map or use another's rings or MRs; and the
rings a user makes count against its RLIMIT_MEMLOCK like the MRs it
pins, so it cannot take kernel memory without bound.
"""
import json
import os

from verbs_apps import CLIENT_IP, NOBODY, gid_index

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "isolation_app.py")


def app(guest, args, user=""):
    r = guest.run("%spython3 %s %s" % (user, APP, args), timeout=300)
    assert r.rc == 0, r
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_remote_access_violations_fail_and_touch_nothing(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    results = app(guest, "access sroce0 %d" % g)
    print("\n".join("%-45s %s" % (r["case"], r["status"]) for r in results))
    controls = [r for r in results if r["case"].startswith("ok ")]
    assert [r["status"] for r in controls] == ["IBV_WC_SUCCESS"] * 5, controls
    assert controls[0]["touched"] == [0]          # the control write landed
    assert [r["touched"] for r in controls[3:]] == [[], []], controls
    bad = [r for r in results if not r["case"].startswith("ok ")]
    assert len(bad) >= 30
    for r in bad:
        want = ("IBV_WC_REM_INV_REQ_ERR" if "misaligned" in r["case"]
                else "IBV_WC_REM_ACCESS_ERR")
        assert r["status"] == want, r
        assert r["touched"] == [], r
        assert r["target_wcs"] == 0, r            # nothing completed there


def test_rkeys_are_not_predictable(guest):
    keys = app(guest, "rkeys sroce0 200")
    assert len(set(keys)) == len(keys)
    steps = [(b - a) & 0xffffffff for a, b in zip(keys, keys[1:])]
    # A guess "previous + constant" must almost never be right, and the
    # table index (bits 31..8) must not simply count up either.
    most_common = max(steps.count(s) for s in set(steps))
    assert most_common <= 3, steps
    index_steps = [((b >> 8) - (a >> 8)) & 0xffffff
                   for a, b in zip(keys, keys[1:])]
    assert max(index_steps.count(s) for s in set(index_steps)) <= 3, index_steps


def test_unprivileged_user_uses_device_but_cannot_add_link(guest):
    r = guest.run("ls -l /dev/infiniband/; " + NOBODY +
                  "ibv_devinfo -d sroce0 && " + NOBODY +
                  "rdma link add sroce9 type sroce netdev eth0; echo add_rc=$?; "
                  "rdma link show sroce9 2>&1; true")
    assert "PORT_ACTIVE" in r.stdout, r
    assert "add_rc=0" not in r.stdout and "Operation not permitted" in r.output, r
    assert "sroce9" not in r.stdout.split("add_rc=")[1], r
    # ...and the unprivileged user's verbs app really moves data.
    g = gid_index(guest, "sroce0", CLIENT_IP)
    results = app(guest, "access sroce0 %d" % g, user=NOBODY)
    assert results[0]["status"] == "IBV_WC_SUCCESS", results[:3]


def test_process_cannot_reach_another_process_objects(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    r = guest.run(
        "rm -f /tmp/hold.stop /tmp/hold.out; "
        "{u}python3 {app} holder sroce0 /tmp/hold.stop >/tmp/hold.out & "
        "for i in $(seq 200); do [ -s /tmp/hold.out ] && break; sleep 0.1; done; "
        "read -r info </tmp/hold.out; "
        "set -- $(echo \"$info\" | python3 -c 'import json,sys; d=json.load(sys.stdin); "
        "print(d[\"pid\"], d[\"lkey\"], d[\"addr\"])'); "
        "{u}python3 {app} intruder sroce0 $1 $2 $3 {g}; "
        "touch /tmp/hold.stop; wait; tail -n1 /tmp/hold.out"
        .format(u=NOBODY, app=APP, g=g), timeout=120)
    assert r.rc == 0, r
    lines = r.stdout.strip().splitlines()
    assert len(lines) >= 2, r
    intruder, holder = json.loads(lines[-2]), json.loads(lines[-1])
    print(intruder, holder)
    # The holder's CQ and QP rings (its mark page's offset is also ours)
    assert intruder["victim_maps"] >= 2, intruder
    assert intruder["cmd_fds"] >= 1, intruder
    assert intruder["mapped"] == [], intruder
    assert len(intruder["refused"]) == intruder["victim_maps"] * intruder["cmd_fds"]
    assert intruder["foreign_lkey_status"] == "IBV_WC_LOC_PROT_ERR", intruder
    assert holder == {"untouched": True}


MEMLOCK_KIB = 2048


def test_rings_count_against_memlock(guest):
    # As on ConnectX, where CQ and QP buffers are pinned user memory: an
    # unprivileged user's rings are charged to its pinned pages; past
    # RLIMIT_MEMLOCK a create fails with ENOMEM, and a ring given back is
    # uncharged.
    r = app(guest, "memlock sroce0 %d" % MEMLOCK_KIB, user=NOBODY)
    print(r)
    one = r["one_kib"]
    assert one >= 4096 * 32 // 1024, r        # 4096 slots of at least 32 B
    assert r["big"] == "ENOMEM", r             # 16 times that: over the limit
    assert r["refused"] == "ENOMEM", r
    assert r["created"] == MEMLOCK_KIB // one, r
    assert r["pinned_at_refusal_kib"] <= MEMLOCK_KIB < r["pinned_at_refusal_kib"] + one, r
    assert r["again"] == "created", r
    assert r["pinned_after_close_kib"] == 0, r
    # CAP_IPC_LOCK lifts the limit, as for memory registration.
    r = app(guest, "memlock sroce0 %d" % MEMLOCK_KIB)
    assert r["big"] == "created" and r["refused"] is None, r
    assert r["pinned_after_close_kib"] == 0, r
