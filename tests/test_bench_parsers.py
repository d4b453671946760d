"""Host-side checks of scripts/bench's parsers and report on captured tool
output (tests/bench_samples), so a refactor cannot silently turn a
failed or unparsed run into a number.  No guest, no timing."""
import json
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import compare  # noqa: E402
import consumer_parsers  # noqa: E402
import consumer_runs  # noqa: E402
import parsers  # noqa: E402
import plan  # noqa: E402
import profile_report  # noqa: E402
import report  # noqa: E402

SAMPLES = os.path.join(ROOT, "tests", "bench_samples")


def sample(name):
    with open(os.path.join(SAMPLES, name)) as f:
        return f.read()


def test_bw_report_in_gbits():
    r = parsers.perftest_bw(sample("write_bw_gbits.txt"))
    assert r["bytes"] == 65536 and r["iterations"] == 992
    assert r["mpps"] == pytest.approx(0.000496)
    assert r["gbps"] == pytest.approx(0.26)


def test_bw_small_messages_take_the_finer_message_rate():
    # Gb/s printed as 0.01; the rate column has six decimals.
    r = parsers.perftest_bw(sample("write_bw_64b_gbits.txt"))
    assert r["gbps"] == pytest.approx(0.010841e6 * 64 * 8 / 1e9)


def test_bw_report_in_megabytes():
    r = parsers.perftest_bw(sample("write_bw_mb.txt"))
    assert r["gbps"] == pytest.approx(r["mpps"] * 1e6 * r["bytes"] * 8 / 1e9, rel=0.01)


@pytest.mark.parametrize("name", ["write_bw_zero_iters.txt", "write_bw_failed.txt"])
def test_bw_failure_is_an_error_not_a_zero(name):
    with pytest.raises(parsers.ParseError):
        parsers.perftest_bw(sample(name))


def test_a_clock_perftest_could_not_calibrate_is_named_not_a_zero():
    """With -F (which the bench passes), perftest goes on when its sampled
    CPU clock fails its own fit (r^2 < 0.9: a busy TCG guest preempted it
    mid-sample) and divides by a frequency of 0: every figure 0.00.  The
    error says so, so the report does not read as a device that moved
    nothing."""
    with pytest.raises(parsers.ParseError) as e:
        parsers.perftest_bw(sample("write_bw_clock_uncalibrated.txt"))
    first = str(e.value).splitlines()[0]
    assert first.startswith("perftest could not calibrate its clock (r^2 0.458808)")
    lat = sample("write_lat_inf.txt")
    with pytest.raises(parsers.ParseError) as e:
        parsers.perftest_lat("Correlation coefficient r^2: 0.5 < 0.9\n" + lat)
    assert str(e.value).startswith("perftest could not calibrate its clock (r^2 0.5)")


def test_latency_report():
    r = parsers.perftest_lat(sample("send_lat.txt"))
    assert (r["typical_us"], r["p99_us"], r["iterations"]) == (25.16, 7254.90, 1000)
    with pytest.raises(parsers.ParseError):
        parsers.perftest_lat(sample("write_bw_gbits.txt"))


def test_rc_pingpong_round_trip():
    r = parsers.rc_pingpong(sample("rc_pingpong.txt"))
    assert r == {"us_per_rt": 32.99, "iterations": 200}
    with pytest.raises(parsers.ParseError):
        parsers.rc_pingpong(sample("send_lat.txt"))


def test_latency_without_a_stdev_still_counts_but_inf_is_an_error():
    r = parsers.perftest_lat(sample("send_lat_nan_stdev.txt"))
    assert r["typical_us"] == 3975.51
    with pytest.raises(parsers.ParseError):
        parsers.perftest_lat(sample("write_lat_inf.txt"))


def test_perf_stat_counts_keep_the_order_of_the_events():
    # The same tracepoint twice (the second filtered) stays two rows.
    rows = parsers.perf_stat_counts(sample("perf_stat_syscalls.txt"))
    assert [e for e, _ in rows] == ["raw_syscalls:sys_enter", "raw_syscalls:sys_enter",
                                    "syscalls:sys_enter_write"]
    assert [c for _, c in rows] == [534, 0, 7]


@pytest.mark.parametrize("text", [
    "<not supported>,,syscalls:sys_enter_write,0,100.00,,\n",
    "<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n",
    "event syntax error: 'raw_syscalls:sys_enterx'\n",
    ""])
def test_perf_stat_that_counted_nothing_is_an_error(text):
    with pytest.raises(parsers.ParseError):
        parsers.perf_stat_counts(text)


def test_iperf3():
    doc = {"end": {"sum_received": {"bits_per_second": 8.9e9}}}
    assert parsers.iperf3_gbps(json.dumps(doc)) == pytest.approx(8.9)
    for bad in ('{"error": "unable to connect to server"}', "iperf3: oops"):
        with pytest.raises(parsers.ParseError):
            parsers.iperf3_gbps(bad)


def test_proc_stat_and_meminfo():
    user, kernel, idle = parsers.proc_stat_ticks(
        "cpu  7188 0 36463 17946 3 0 14642 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
    assert (user, kernel, idle) == (7188, 36463 + 14642, 17946 + 3)
    m = parsers.meminfo_kib("MemTotal:  3043400 kB\nMemFree: 2935096 kB\n"
                            "Slab:  21112 kB\nHugePages_Total:       0\n")
    assert m["Slab"] == 21112 and m["HugePages_Total"] == 0


def fake_run(tmp_path):
    """A two-round run: sroce twice as fast as rxe at 64 KiB, one failure."""
    s = plan.Settings()
    ws = [w for w in plan.loopback_workloads(s) + plan.wire_workloads(s)]
    meta = {"guest": {"kernel": "6.1", "cpus": 2, "mem_mib": 3000, "veth_mtu": 9000,
                      "roce_active_mtu": "4096 (5)", "clocksource": "hpet"},
            "settings": vars(s), "workloads": [w.as_dict() for w in ws]}
    recs = []
    for rnd, (rxe, sroce) in enumerate([(0.1, 0.2), (0.3, 0.4)], 1):
        for dev, v in (("rxe", rxe), ("sroce", sroce)):
            recs.append({"workload": "write_bw/64KiB/1qp", "path": "loopback",
                         "device": dev, "round": rnd, "ok": True,
                         "metrics": {"gbps": v}})
    recs.append({"workload": "send_lat/2B", "path": "loopback", "device": "sroce",
                 "round": 1, "ok": False, "error": "client exit 1: boom"})
    (tmp_path / "meta.json").write_text(json.dumps(meta))
    (tmp_path / "raw.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return tmp_path


def test_report_medians_ratios_and_failures(tmp_path):
    meta, recs = report.load(fake_run(tmp_path))
    s = report.Summary(meta, recs)
    assert s.median("loopback", "write_bw/64KiB/1qp", "rxe") == pytest.approx(0.2)
    assert s.median("loopback", "send_lat/2B", "sroce") is None
    assert s.median("wire", "tcp/iperf3", "tcp") is report.NOT_RUN
    rows = {r[0]: r for r in report.comparison_rows(s)}
    assert rows["write_bw/64KiB/1qp"][4] == pytest.approx(0.3 / 0.2)
    targets = {r[0]: r for r in report.target_rows(s)}
    bw = targets["WRITE bandwidth 64 KiB, sroce/rxe (loopback)"]
    assert bw[2:] == ("1.5", "no")
    md = report.markdown(meta, {"date": "today", "commit": "abc"}, s, [])
    assert "boom" in md and "| write_bw/64KiB/1qp | Gb/s | 0.2 | 0.3 | 1.5 | sroce |" in md
    assert "settings for this run" not in md
    meta["params"] = ["crc_engine=table", "rx_steer=1"]
    md = report.markdown(meta, {}, s, [])
    assert "device settings for this run: `crc_engine=table`, `rx_steer=1`." in md


def test_report_latency_beside_a_rate_is_lower_is_better(tmp_path):
    # NVMe-oF's row is kIOPS (higher is better) with its p99 beside it:
    # the p99 row's "better" must read the other way.
    run = fake_run(tmp_path)
    meta = json.loads((run / "meta.json").read_text())
    nvme = [w for w in plan.consumer_workloads(plan.Settings())
            if w.id == "nvmeof/randread/4KiB/qd32"]
    meta["workloads"] += [w.as_dict() for w in nvme]
    (run / "meta.json").write_text(json.dumps(meta))
    with open(run / "raw.jsonl", "a") as f:
        for dev, kiops, p99 in (("rxe", 6.0, 10000.0), ("sroce", 3.0, 16000.0)):
            f.write(json.dumps({"workload": nvme[0].id, "path": "loopback",
                                "device": dev, "round": 1, "ok": True,
                                "metrics": {"kiops": kiops, "p99_us": p99}}) + "\n")
    meta, recs = report.load(run)
    rows = {r[0]: r for r in report.comparison_rows(report.Summary(meta, recs))}
    assert rows["nvmeof/randread/4KiB/qd32 kiops"][5] is True
    assert rows["nvmeof/randread/4KiB/qd32 p99"][5] is False
    md = report.markdown(meta, {}, report.Summary(meta, recs), [])
    assert "| nvmeof/randread/4KiB/qd32 p99 | us | 10000 | 16000 | 1.6 | rxe |" in md


def test_report_syscalls_headline_is_doorbells_with_all_beside(tmp_path):
    run = fake_run(tmp_path)
    with open(run / "raw.jsonl", "a") as f:
        for dev, doorbell, clock, other in (("rxe", 1.0, 0.5, 0.0),
                                            ("sroce", 0.002, 0.5, 0.01)):
            f.write(json.dumps({
                "workload": "syscalls_per_wr/write/4KiB", "path": "loopback",
                "device": dev, "round": 1, "ok": True,
                "metrics": {"per_wr": doorbell, "clock_reads_per_wr": clock,
                            "other_per_wr": other, "device_per_wr": doorbell + other,
                            "all_per_wr": doorbell + clock + other}}) + "\n")
    meta, recs = report.load(run)
    s = report.Summary(meta, recs)
    targets = {r[0]: r[2:] for r in report.target_rows(s)}
    assert targets["doorbell syscalls per WR, sroce (WRITE 4 KiB)"] == ("0.002", "yes")
    assert targets["all syscalls per WR but perftest's clock reads, sroce "
                   "(WRITE 4 KiB)"] == ("0.012", "yes")
    rows = {r[0]: r for r in report.comparison_rows(s)}
    assert rows["syscalls_per_wr/write/4KiB all but clock reads"][2:4] == (1.0, 0.012)
    md = report.markdown(meta, {"date": "today", "commit": "abc"}, s, [])
    assert ("Syscalls per WR on sroce: doorbell write() 0.002, other but clock "
            "reads 0.01, perftest's clock reads (noise) 0.5.") in md


def test_report_of_a_partial_plan(tmp_path):
    # scripts/bench --only: workloads outside the plan read "not run".
    run = fake_run(tmp_path)
    meta, recs = report.load(run)
    meta["workloads"] = [w for w in meta["workloads"] if "syscalls" in w["id"]]
    s = report.Summary(meta, [])
    assert s.median("loopback", "tcp/iperf3", "tcp-sroce-path") is report.NOT_RUN
    assert "| n/a |" in report.markdown(meta, {}, s, [])


def test_report_writes_all_three_files(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    fake_run(run)
    out = tmp_path / "docs"
    sys.argv = ["report.py", str(run), str(out)]
    report.main()
    assert {p.name for p in out.iterdir()} == {"latest.md", "latest.json", "ratios.png"}


def test_perf_report_rows():
    rows = parsers.perf_report_rows(sample("perf_report_profile.txt"))
    assert rows[0] == (10, "swapper", "[kernel.kallsyms]", "native_safe_halt")
    assert rows[1][3] == "sroce::poll_cq(ibv_cq*, int, ibv_wc*)"
    assert rows[-1][3] == "a|b" and sum(r[0] for r in rows) == 20
    for bad in ("", "# Samples: 0\n", " 5.00% | x | a | b | c\n"):
        with pytest.raises(parsers.ParseError):
            parsers.perf_report_rows(bad)


def test_profile_leaves_halted_samples_out_of_the_shares():
    p = profile_report.Profile(parsers.perf_report_rows(sample("perf_report_profile.txt")))
    assert (p.total, p.busy, p.halted_share) == (20, 10, 0.5)
    # Idle-task work that is not the halt (softirqs) stays in.
    assert dict(p.symbols) == {
        "sroce::poll_cq(ibv_cq*, int, ibv_wc*) (libsroce-rdmav34.so)": 0.4,
        "sroce_req_run (sroce.ko)": 0.2, "? (ib_write_bw)": 0.2,
        "net_rx_action (kernel)": 0.1, "a|b (kernel)": 0.1}
    assert dict(p.objects)["kernel"] == pytest.approx(0.2)
    assert p.commands[0] == ("ib_write_bw", pytest.approx(0.7))


def test_profile_idle_check_against_proc_stat():
    share = profile_report.proc_stat_idle_share(
        ["cpu  100 0 100 800 0 0 0 0 0 0", "cpu  150 0 150 1700 0 0 0 0 0 0"])
    assert share == pytest.approx(0.9)
    agree = profile_report.idle_verdict([("rxe", 0.93, 0.9), ("sroce", 0.5, 0.52)])
    assert "agree within 3.0 points" in agree and "real idleness" in agree
    differ = profile_report.idle_verdict([("rxe", 0.95, 0.6), ("sroce", 0.5, 0.52)])
    assert "differ by 35.0 points on rxe" in differ


def test_profile_markdown(tmp_path):
    (tmp_path / "perf.txt").write_text(sample("perf_report_profile.txt"))
    stat = ["cpu  100 0 100 800 0 0 0 0 0 0", "cpu  150 0 150 1700 0 0 0 0 0 0"]
    recs = [{"workload": "ib_write_bw -s 64", "device": dev, "window_s": 10,
             "window_start_s": 10, "result": None, "perf_report": "perf.txt",
             "proc_stat": stat, "window_inside_run": inside}
            for dev, inside in (("rxe", True), ("sroce", False))]
    doc = {"guest": {"kernel": "6.1", "cpus": 2, "mem_mib": 3000, "veth_mtu": 9000,
                     "clocksource": "hpet"}, "records": recs}
    md = profile_report.markdown(doc, {"date": "today", "commit": "abc"}, str(tmp_path))
    assert "## `ib_write_bw -s 64`" in md and "commit `abc`" in md
    assert "| rxe | no perftest report" in md and "| 20 | 50.0% | 90.0% |" in md
    assert "differ by 40.0 points on rxe" in md
    assert md.count("outlasted the run") == 1
    assert "| 1 | `sroce::poll_cq(ibv_cq*, int, ibv_wc*) (libsroce-rdmav34.so)` | 40.0% |" in md
    assert "| # | rxe: top symbols | % | sroce: top symbols | % |" in md
    assert "`a\\|b (kernel)`" in md


@pytest.mark.parametrize("dso,sym,want", [
    ("[kernel.kallsyms]", "fold16_crc", "ICRC"),            # ours, filed under the kernel
    ("[sroce]", "roce_crc32_table_update", "ICRC"),
    ("[kernel.kallsyms]", "loop_64", "ICRC"),               # crc32-pclmul, rxe's
    ("[kernel.kallsyms]", "save_fpregs_to_fpstate", "FPU save/restore"),
    ("[kernel.kallsyms]", "memcpy", "copy and clear"),
    ("[kernel.kallsyms]", "__kmem_cache_alloc_node", "allocation"),
    ("[kernel.kallsyms]", "ib_uverbs_post_send", "syscall and uverbs"),
    ("[kernel.kallsyms]", "ip_finish_output2", "IP/UDP stack"),
    ("[kernel.kallsyms]", "__udp4_lib_rcv", "IP/UDP stack"),
    ("[kernel.kallsyms]", "sroce_send_engine", "driver"),   # by the module's symbol list
    ("[sroce]", "resp_write", "driver"),
    ("[kernel.kallsyms]", "rxe_responder", "driver"),
    ("[kernel.kallsyms]", "_raw_spin_unlock_irqrestore", "other kernel"),
    ("[unknown]", "0x00007f7b9e193350", "user space"),
    ("libsroce-rdmav34.so", "sroce::poll_cq", "user space"),
])
def test_profile_activity(dso, sym, want):
    assert profile_report.activity(dso, sym, {"sroce_send_engine"}) == want


def test_profile_activity_per_message():
    rows = [(10, "swapper", "[kernel.kallsyms]", "native_safe_halt"),
            (6, "x", "[kernel.kallsyms]", "fold16_crc"),
            (4, "x", "[kernel.kallsyms]", "ip_rcv")]
    prof = {"sroce": profile_report.Profile(rows)}
    md = "\n".join(profile_report.activity_table(
        [{"device": "sroce", "result": {"mpps": 0.5}}], prof, 2))
    # 6 of 20 samples on 2 vCPUs at 0.5 messages per us: 1.2 us per message.
    assert "| ICRC | 60.0% | 1.20 |" in md
    assert "| IP/UDP stack | 40.0% | 0.80 |" in md
    assert "| all busy | 100.0% | 2.00 |" in md


def test_cc_report(tmp_path):
    import cc_report
    events = [[0.1, 16, 20000, "cnp_cut", "fast_recovery", 5000],
              [0.2, 16, 30000, "rate_timer", "fast_recovery", 4000],
              [0.3, 16, 10000, "local_pushback", "fast_recovery", 6000]]
    rec = {"leaf": "red", "qdisc": "red ...", "kbit": 40000, "dcqcn": "defaults",
           "roce": {"qps": 4, "seconds": 20, "mbit": [9, 9, 9, 9], "total_mbit": 36.0,
                    "jain": 1.0, "window_marks": 5, "window_drops": 1, "run_drops": 7,
                    "counters": {"sroce1": {"cnp_rcvd": 9, "timeouts": 0}},
                    "events": events, "perftest_ok": True},
           "tcp": {"total_mbit": 30.0, "jain": 0.8, "drops": 3}}
    log = tmp_path / "run.jsonl"
    log.write_text("vm-run: noise\n" + json.dumps(rec) + "\n")
    md = cc_report.markdown(cc_report.load([str(log)]), {"commit": "abc"})
    assert "| red | defaults | 36.0 (90%) | 1.000 | 5 | 1 / 7 | 9 | 0 | 30.0 (75%) " \
           "| 0.800 | 3 | yes |" in md
    # Two cuts, one increase, median and last rate in Mb/s.
    assert "| red | defaults | 16 | 2 | 1 | 20 | 10 |" in md
    rec["roce"]["total_mbit"] = 35.9
    log.write_text(json.dumps(rec) + "\n")
    assert "| no |" in cc_report.markdown(cc_report.load([str(log)]), {})


def test_bw_iterations_are_whole_completion_periods():
    """perftest 4.5 hangs a multi-QP run whose iterations are not a whole
    number of its completion periods (guest_runner.whole_cq_mods)."""
    import guest_runner
    assert guest_runner.whole_cq_mods(625, 64) == 700
    assert guest_runner.whole_cq_mods(600, 4096) == 600
    # over 8 KiB perftest signals every WR: any count is whole
    assert guest_runner.whole_cq_mods(625, 65536) == 625
    # the period never exceeds the tx depth (scaling runs shrink it)
    assert guest_runner.whole_cq_mods(5, 4096, depth=2) == 6
    assert guest_runner.whole_cq_mods(100, 4096, depth=16) == 112


def test_every_scaling_run_moves_about_the_same_volume():
    """Each QP count of the scaling runs moves plan.SCALING_WRITES WRITEs,
    give or take the rounding to whole completion periods, with at most
    plan.SCALING_IN_FLIGHT in flight in all: the 8192-QP target divides two windows of one size.
    When the 8-QP run moved 8192 WRITEs (34 MiB, ~70 ms) against 8192 QPs'
    49152, its figure swung 2.5 to 4.0 Gb/s within one bench run."""
    import guest_runner
    for qps in plan.Settings().scaling_qps:
        depth, iters = guest_runner.scaling_depth_and_iters(qps, 4096)
        writes = qps * iters
        assert plan.SCALING_WRITES <= writes <= plan.SCALING_WRITES * 1.05, (qps, iters)
        assert qps * depth <= plan.SCALING_IN_FLIGHT, (qps, depth)
        assert depth <= guest_runner.PERFTEST_TX_DEPTH, (qps, depth)
        assert iters == guest_runner.whole_cq_mods(iters, 4096, depth), (qps, iters)


def test_qp_fanout_line():
    r = parsers.qp_fanout("created\nqps 8192 depth 2 size 4096 writes 172032 "
                          "seconds 2.376000 gbps 2.372000\n")
    assert r == {"qps": 8192, "depth": 2, "bytes": 4096, "writes": 172032,
                 "seconds": 2.376, "gbps": 2.372}
    with pytest.raises(parsers.ParseError):
        parsers.qp_fanout("qp_fanout: ibv_create_qp: Cannot allocate memory\n")


@pytest.mark.parametrize("settings", [plan.Settings(), plan.Settings.quick()])
def test_every_fanout_run_keeps_one_depth_and_a_steady_state(settings):
    """The fan-out runs change only the number of QPs: one depth per QP at
    every count, and enough WRITEs for qp_fanout's steady state (it
    refuses fewer than 8 rounds of every QP)."""
    runs = [w for w in plan.loopback_workloads(settings) if w.kind == "fanout"]
    assert [w.params["qps"] for w in runs] == list(settings.fanout_qps)
    assert 8 in settings.fanout_qps
    for w in runs:
        assert w.params["depth"] == plan.FANOUT_DEPTH
        assert settings.fanout_writes >= 8 * w.params["qps"] * w.params["depth"], w.id


def test_report_qp_scaling_target_is_the_fanout_ratio(tmp_path):
    """The 8192-QP target divides qp_fanout's runs; perftest's scaling
    ratio is still shown, marked as no measure of the target."""
    run = fake_run(tmp_path)
    figures = {("fanout/write/4KiB/8qp", "sroce"): 2.0,
               ("fanout/write/4KiB/8192qp", "sroce"): 1.5,
               ("scaling/write/4KiB/8qp", "sroce"): 4.0,
               ("scaling/write/4KiB/8192qp", "sroce"): 1.0}
    with open(run / "raw.jsonl", "a") as f:
        for (wid, dev), gbps in figures.items():
            f.write(json.dumps({"workload": wid, "path": "loopback", "device": dev,
                                "round": 1, "ok": True,
                                "metrics": {"gbps": gbps}}) + "\n")
    meta, recs = report.load(run)
    s = report.Summary(meta, recs)
    targets = {r[0]: r[2:] for r in report.target_rows(s)}
    assert targets["bandwidth at 8192qp / at 8 QPs, 2 WRITEs in flight per QP, "
                   "sroce (qp_fanout)"] == ("0.75", "no")
    perftest = [v for k, v in targets.items() if k.startswith("bandwidth at 8192qp")
                and "perftest" in k]
    assert perftest == [("0.25", "-")]


def test_a_failed_scaling_count_skips_only_larger_ones(monkeypatch):
    """A device that failed at 8192 QPs in round 1 still runs 8 QPs in
    round 2: only larger counts would fail slower.  (Every smaller count of
    rxe went unmeasured in rounds 2 and 3 of eb5128e's run.)"""
    import guest_runner
    monkeypatch.setattr(guest_runner, "SCALING_FAILED", {})
    out = (" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
           " 4096       49600            100.00             100.00 \t\t   0.025600\n")

    class Pair:
        class server:
            dev = "rxe0"

        def perftest(self, tool, args, timeout):
            return out, 1.0, (0, 0)

    def workload(qps):
        return plan.Workload("scaling/write/4KiB/%dqp" % qps, "scaling", "gbps",
                             "Gb/s", True, params=dict(size=4096, qps=qps))
    guest_runner.SCALING_FAILED[("loopback", "rxe0")] = 8192
    assert guest_runner.run_scaling(workload(8), Pair(), plan.Settings())["gbps"] > 0
    with pytest.raises(guest_runner.RunFailed):
        guest_runner.run_scaling(workload(8192), Pair(), plan.Settings())


def test_a_failed_run_keeps_why_it_failed(tmp_path):
    """A failure records the error's first line and the end of the output
    after it, and the report lists the first line: keeping the last 600
    characters of a long perftest output kept only its dashes."""
    import guest_runner
    out = "\n".join([": LID 0000 QPN 0x4d47"] * 40 + [
        " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]",
        " 4096       49152            0.00               0.00   \t\t   0.000000",
        "-" * 87])
    with pytest.raises(parsers.ParseError) as e:
        parsers.perftest_bw(out)
    text = guest_runner.failure_text(e.value)
    assert text.splitlines()[0] == "perftest reported nothing moved:"
    assert text.endswith("-" * 87) and len(text) < 1000
    run = fake_run(tmp_path)
    with open(run / "raw.jsonl", "a") as f:
        f.write(json.dumps({"workload": "scaling/write/4KiB/8192qp", "path": "loopback",
                            "device": "rxe", "round": 1, "ok": False,
                            "error": text}) + "\n")
    meta, recs = report.load(run)
    md = report.markdown(meta, {}, report.Summary(meta, recs), [])
    assert ("- loopback rxe scaling/write/4KiB/8192qp round 1: "
            "perftest reported nothing moved:") in md


# scripts/bench --insns (bench/insn_report.py): the plugin's marks joined
# with the guest's runs.
import insn_report  # noqa: E402


def insn_runs(transport, size, rep, short, long_, marks, first):
    """Two runs (N and 3N round trips) whose marks start at `first`, costing
    short and long_ (kernel, user) instructions."""
    k, u = 1000 * first, 7 * first
    for n, (kc, uc) in ((100, short), (300, long_)):
        marks[first] = (k, u)
        marks[first + 1] = (k + kc, u + uc)
        yield {"transport": transport, "size": size, "iters": n, "rep": rep,
               "start": first, "end": first + 1, "error": ""}
        first += 2
        k, u = k + kc + 5, u + uc + 5


def test_insn_report_takes_the_difference_of_the_two_lengths():
    marks, runs = {}, []
    # Start and exit cost 9,000/500 whatever the length; a round trip
    # 40/10 (rep 0) or 44/10 (rep 1) more.
    runs += insn_runs("sroce", 64, 0, (9000 + 4000, 500 + 1000),
                      (9000 + 12000, 500 + 3000), marks, 1)
    runs += insn_runs("sroce", 64, 1, (9000 + 4400, 500 + 1000),
                      (9000 + 13200, 500 + 3000), marks, 11)
    raw = insn_report.per_round_trip(runs, marks)
    assert raw[("sroce", 64)]["kernel"] == [40, 44]
    assert raw[("sroce", 64)]["user"] == [10, 10]
    s = insn_report.summarise(raw[("sroce", 64)])
    assert s["total"] == pytest.approx(52) and s["reps"] == 2
    assert s["spread"] == pytest.approx(4 / 52)


def test_insn_report_keeps_a_failed_run_out_of_the_figures():
    marks, runs = {}, list(insn_runs("rxe", 4096, 0, (10, 10), (30, 30), {}, 1))
    runs[1]["error"] = "Couldn't connect to 198.51.100.1:18515"
    raw = insn_report.per_round_trip(runs, marks)
    assert raw[("rxe", 4096)]["kernel"] == []
    assert raw[("rxe", 4096)]["errors"] == ["a mark is missing",
                                             "Couldn't connect to 198.51.100.1:18515"]
    assert insn_report.summarise(raw[("rxe", 4096)]) is None


def test_insn_report_counts_bulk_sizes_per_kib_and_others_per_message():
    assert insn_report.unit(64) == ("message", 2)
    assert insn_report.unit(1048576) == ("KiB", 2048)


# scripts/bench --insns --profile (bench/insn_profile.py): blocks named by
# the guest's kernel symbols.
import insn_profile  # noqa: E402

KSYMS = ("ffffffff81000000 T _stext\n"
         "ffffffff81001000 T memcpy_orig\n"
         "ffffffff81002000 t xa_load\n"
         "ffffffffc0100000 t req_send_packet\t[sroce]\n"
         "ffffffffc0100400 t resp_rc_uc\t[sroce]\n")


def profiled_run(tmp_path, name, short, long_, iters=10, error=""):
    """A run folder with the two profiles of @iters and 3 x @iters round
    trips, their blocks (vaddr, instructions, starts) @short and @long_."""
    run = tmp_path / name
    run.mkdir()
    records = [json.dumps({"transport": "sroce-nopoll", "size": 1048576, "iters": n,
                           "start": 0xfff00001, "end": 0xfff00002, "error": error})
               for n in (iters, 3 * iters)]
    (run / "profile-guest.txt").write_text("\n".join(records) + "\n" + KSYMS)
    (run / "profile.out").write_text("".join(
        "# profile\n" + "".join("%x %d %d\n" % b for b in blocks)
        for blocks in (short, long_)))
    return str(run)


START_UP = [(0x7f0000002000, 100, 7), (0xffffffff81000010, 50, 3)]   # in both runs


def test_insn_profile_charges_each_block_to_the_function_it_starts_in(tmp_path):
    run = profiled_run(tmp_path, "a", START_UP, START_UP + [
        (0xffffffff81001010, 10, 100),     # memcpy_orig
        (0xffffffff81001800, 5, 40),       # memcpy_orig, a later block
        (0xffffffffc0100410, 8, 50),       # resp_rc_uc, not req_send_packet
        (0xffffffffc0100410, 8, 25),       # the same block translated again
        (0x7f0000001000, 3, 20),           # user space
    ])
    records, funcs, modules = insn_profile.load(run)
    # The start-up in both runs drops out.
    assert {k: v for k, v in funcs.items() if v} == {
        "memcpy_orig": 1200, "resp_rc_uc [sroce]": 600, "[user]": 60}
    assert {k: v for k, v in modules.items() if v} == {"vmlinux": 1200, "sroce": 600,
                                                        "user": 60}
    # 30 round trips less 10: 40 messages (a round trip is two).
    assert insn_profile.per_message(records) == 40


def test_insn_profile_says_what_changed_per_message(tmp_path):
    before = profiled_run(tmp_path, "before", START_UP,
                          START_UP + [(0xffffffff81002000, 10, 80),
                                      (0xffffffffc0100000, 10, 40)])
    after = profiled_run(tmp_path, "after", START_UP,
                         START_UP + [(0xffffffff81002000, 10, 40),
                                     (0xffffffffc0100400, 10, 120)], iters=20)
    assert insn_profile.main([after, "--against", before]) == 0
    md = open(os.path.join(after, "profile.md")).read()
    # Per message: xa_load 20 before (800 / 40), 5 after (400 / 80).
    assert "| 20 | 5 | -15 | `xa_load` |" in md
    assert "| 0 | 15 | +15 | `resp_rc_uc [sroce]` |" in md
    assert "| 10 | 0 | -10 | `req_send_packet [sroce]` |" in md
    # The module's own functions have a table of their own: only they.
    own = md[md.index("## sroce's functions"):md.index("## By function")]
    assert "`resp_rc_uc [sroce]`" in own and "xa_load" not in own


def test_insn_profile_refuses_a_failed_run(tmp_path):
    run = profiled_run(tmp_path, "bad", [], [], error="Couldn't connect")
    with pytest.raises(SystemExit, match="the profiled runs failed: .*Couldn't connect"):
        insn_profile.load(run)


def test_insn_profile_refuses_a_missing_profile(tmp_path):
    run = profiled_run(tmp_path, "short", START_UP, START_UP)
    out = open(os.path.join(run, "profile.out")).read()
    open(os.path.join(run, "profile.out"), "w").write(out[:out.rindex("# profile")])
    with pytest.raises(SystemExit, match="1 profiles where its two runs make two"):
        insn_profile.load(run)


SOCK_PINGPONG = os.path.join(os.environ.get("SROCE_BUILD", os.path.join(ROOT, "build")),
                             "cmake", "bench", "tools", "sock_pingpong")


@pytest.mark.parametrize("proto", ["tcp", "udp"])
def test_sock_pingpong_checks_every_message_on_loopback(proto):
    """The bench's TCP/UDP baseline (bench/tools/sock_pingpong.c) on the
    host's loopback: both ends finish and say what they moved."""
    import socket
    import subprocess
    with socket.socket() as s:     # a free port, for both protocols here
        s.bind(("127.0.0.1", 0))
        port = str(s.getsockname()[1])
    args = [SOCK_PINGPONG, proto, "-s", "4096", "-n", "200", "-p", port]
    server = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    client = subprocess.run(args + ["127.0.0.1"], capture_output=True, text=True,
                            timeout=30)
    out, _ = server.communicate(timeout=30)
    assert client.returncode == 0 and server.returncode == 0, client.stderr
    assert out.strip() == client.stdout.strip() == "200 iters of 4096 bytes over " + proto


# The library programs' reports (bench/consumer_parsers.py), captured in a
# bookworm guest by scripts/bench --quick.
def test_fi_pingpong_report():
    r = consumer_parsers.fi_pingpong(sample("fi_pingpong_msg_64b.txt"))
    assert r == {"iterations": 200, "us_per_rt": 604.43, "mbps": 0.11}


def test_fi_pingpong_counts_of_thousands():
    """From 1,000 on fi_pingpong prints its counts as "2k" (the bench's
    2,000 round trips): every such report was "no fi_pingpong report"."""
    r = consumer_parsers.fi_pingpong(
        "bytes   #sent   #ack     total       time     MB/sec    usec/xfer   Mxfers/sec\n"
        "64      2k      =2k      250k        0.13s      2.01      31.79       0.03\n")
    assert r == {"iterations": 2000, "us_per_rt": 31.79, "mbps": 2.01}


def test_fi_pingpong_without_a_row_or_with_acks_missing_is_an_error():
    with pytest.raises(parsers.ParseError):
        consumer_parsers.fi_pingpong("fi_pingpong: fi_getinfo(): No data available\n")
    short = sample("fi_pingpong_msg_64b.txt").replace("=200", "=199")
    with pytest.raises(parsers.ParseError):
        consumer_parsers.fi_pingpong(short)


def test_ucx_perftest_latency_and_bandwidth():
    lat = consumer_parsers.ucx_perftest(sample("ucx_tag_lat.txt"))
    assert lat["iterations"] == 200 and lat["typical_us"] == 23.0 and lat["avg_us"] == 112.47
    bw = consumer_parsers.ucx_perftest(sample("ucx_tag_bw.txt"))
    # 126.47 MB/s, UCX's MB being 2^20 bytes.
    assert bw["gbps"] == pytest.approx(126.47 * 2**20 * 8 / 1e9)
    with pytest.raises(parsers.ParseError):
        consumer_parsers.ucx_perftest("ud_ep.c:276  Fatal: UD endpoint: unhandled timeout error")


def test_rstream_report():
    r = consumer_parsers.rsocket_stream(sample("rstream.txt"))
    assert r == {"gbps": 0.24, "us_per_xfer": 2176.52, "name": "custom"}
    header_only = sample("rstream.txt").splitlines()[0]
    with pytest.raises(parsers.ParseError):
        consumer_parsers.rsocket_stream(header_only)


def test_cmtime_sums_the_set_up_steps_per_connection():
    r = consumer_parsers.cmtime(sample("cmtime.txt"))
    assert r["setup_us_per_conn"] == pytest.approx(35.50 + 562.35 + 450.20 + 481.25 + 10786.50)
    assert r["steps"]["disconnect"] == 11557.15
    with pytest.raises(parsers.ParseError):
        consumer_parsers.cmtime("creating id\nresolving address\n")


def test_consumer_workloads_compare_sroce_with_rxe():
    ws = plan.consumer_workloads(plan.Settings.quick())
    kinds = {w.kind for w in ws}
    assert kinds == {"fi_pingpong", "ucx", "rsocket_stream", "cmtime", "nvmeof"}
    assert all(w.devices == ("rxe", "sroce") and w.path == "loopback" for w in ws)
    assert len({w.id for w in ws}) == len(ws)


def test_ucx_latency_also_in_sleep_mode_with_its_average():
    """UCX's sleep mode waits on completion events: a missed event stalls
    a round trip, which the median hides and the average shows."""
    ws = {w.id: w for w in plan.consumer_workloads(plan.Settings.quick())}
    for tls in ("rc_verbs", "ud_verbs"):
        w = ws["ucx/%s/tag_lat_sleep/64B" % tls]
        assert w.params["wait"] == "sleep" and w.params["test"] == "tag_lat"
        assert w.also == ("avg_us",) and not w.higher_is_better
        assert "wait" not in ws["ucx/%s/tag_lat/64B" % tls].params


FIO_JSON = """note: both iodepth >= 1 and synchronous I/O engine are selected
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {"jobname" : "bench", "error" : 0,
     "read" : {"io_bytes" : 67108864, "bw_bytes" : 52428800, "iops" : 12800.5,
               "slat_ns" : {"mean" : 300000.0},
               "clat_ns" : {"percentile" : {"50.000000" : 2000000, "99.000000" : 4014080}},
               "lat_ns" : {"percentile" : {"50.000000" : 2300000, "99.000000" : 4407296}}},
     "write" : {"io_bytes" : 0, "bw_bytes" : 0, "iops" : 0.0}}
  ]
}
"""


def test_fio_json_read_rate_bandwidth_and_p99():
    r = consumer_parsers.fio_json(FIO_JSON)
    assert r["kiops"] == pytest.approx(12.8005)
    assert r["gbps"] == pytest.approx(0.4194304)
    # The whole latency (submission + completion), not clat alone: a
    # device that does the I/O inside io_submit() (sroce, inline) shows
    # almost nothing in clat, one that defers it (rxe) shows it all.
    assert r["p99_us"] == pytest.approx(4407.296)


def test_fio_json_without_total_latency_percentiles_is_an_error():
    text = FIO_JSON.replace('"lat_ns" : {"percentile" : {"50.000000" : 2300000, '
                            '"99.000000" : 4407296}}', '"lat_ns" : {"mean" : 2300000.0}')
    with pytest.raises(parsers.ParseError, match="lat_percentiles"):
        consumer_parsers.fio_json(text)


def test_nvmeof_fio_asks_for_total_latency_percentiles():
    script = consumer_runs.nvme_script("sroce", "randread", 4096, 1, 1 << 20)
    assert "--lat_percentiles=1" in script


@pytest.mark.parametrize("text", [
    "fio: failed to open /dev/nvme0n1\n",
    FIO_JSON.replace('"error" : 0', '"error" : 5'),
    FIO_JSON.replace('"io_bytes" : 67108864', '"io_bytes" : 0'),
])
def test_fio_json_failure_is_an_error_not_a_zero(text):
    with pytest.raises(parsers.ParseError):
        consumer_parsers.fio_json(text)


def bench_doc(rounds):
    """A latest.json of one bandwidth and one latency workload; @rounds:
    [(rxe gbps, sroce gbps, rxe us, sroce us)] per round."""
    workloads = [
        {"id": "bw", "path": "loopback", "metric": "gbps", "also": [],
         "higher_is_better": True},
        {"id": "lat", "path": "loopback", "metric": "typical_us", "also": [],
         "higher_is_better": False}]
    records = []
    for i, (rb, sb, rl, sl) in enumerate(rounds, 1):
        for dev, bw, lat in (("rxe", rb, rl), ("sroce", sb, sl)):
            records.append({"workload": "bw", "path": "loopback", "device": dev,
                            "round": i, "ok": True, "metrics": {"gbps": bw}})
            records.append({"workload": "lat", "path": "loopback", "device": dev,
                            "round": i, "ok": True, "metrics": {"typical_us": lat}})
    return {"meta": {"workloads": workloads}, "records": records}


def test_compare_reads_ratios_and_their_spread():
    # Before: sroce 3x rxe's bandwidth in each round, latency half; after:
    # the host twice as fast for both devices (ratios unchanged) in one
    # case, sroce's bandwidth ratio down to 2x in the other.
    before = bench_doc([(1, 3, 10, 5), (1.1, 3.3, 10, 5), (0.9, 2.7, 10, 5)])
    same = bench_doc([(2, 6, 5, 2.5), (2, 6.2, 5, 2.5), (2, 5.8, 5, 2.5)])
    worse = bench_doc([(2, 4, 5, 2.5), (2, 4.1, 5, 2.5), (2, 3.9, 5, 2.5)])
    rows = {r[0]: r for r in compare.compare(before, same)}
    assert rows["bw"][7] == "within the spread" and rows["lat"][7] == "within the spread"
    assert rows["bw"][2] == pytest.approx(3) and rows["lat"][2] == pytest.approx(0.5)
    rows = {r[0]: r for r in compare.compare(before, worse)}
    assert rows["bw"][7] == "worse beyond the spread", rows["bw"]
    assert rows["bw"][6] == pytest.approx(2 / 3 - 1)
    # A lower latency ratio is better for sroce.
    rows = {r[0]: r for r in compare.compare(before, bench_doc([(1, 3, 10, 2)] * 3))}
    assert rows["lat"][7] == "better beyond the spread"


def test_compare_takes_a_zero_figure():
    # sroce's syscalls per WR are 0 where rxe's are 1: a ratio of 0 in both
    # runs is no change, and 0 reached from above is better (lower is
    # better); a bandwidth ratio falling to 0 is worse.
    before = bench_doc([(1, 3, 10, 0)] * 3)
    rows = {r[0]: r for r in compare.compare(before, bench_doc([(1, 3, 10, 0)] * 3))}
    assert rows["lat"][6] == 0 and rows["lat"][7] == "within the spread"
    rows = {r[0]: r for r in compare.compare(bench_doc([(1, 3, 10, 5)] * 3), before)}
    assert rows["lat"][7] == "better beyond the spread"
    rows = {r[0]: r for r in compare.compare(before, bench_doc([(1, 0, 10, 0)] * 3))}
    assert rows["bw"][7] == "worse beyond the spread"


def test_compare_does_not_judge_a_figure_of_one_round():
    rows = {r[0]: r for r in compare.compare(bench_doc([(1, 3, 10, 5)]),
                                             bench_doc([(1, 3.01, 10, 5)]))}
    assert rows["bw"][7] == "one round: no spread to judge by"
