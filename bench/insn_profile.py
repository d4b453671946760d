#!/usr/bin/python3
"""Names the blocks of a profiled run (scripts/bench --insns --profile):
reads RUN/profile.out (the plugin's profiles, each a line "# profile" and
then "VADDR INSNS STARTS" for every translated block that ran between
the profile's marks) and RUN/profile-guest.txt (the guest's JSON line
for each of its two runs, of N and 3N round trips, then its
/proc/kallsyms text symbols), charges each block's instructions times
its starts to the kernel function it starts in (user space as one
"[user]") and takes the second run's less the first's, so that the
programs' start and exit drop out as they do from the counts.  Writes
RUN/profile.md: instructions per message by module, by function of the
module --module names and by function, the largest first.  With
--against an earlier RUN, the tables are what changed per message (a
function renamed or split between the two shows as one gone and one
new).  A block that starts in one function and runs
into another is charged to the first: inlined code and tail calls move
with their caller, so compare a function together with its callees."""
import argparse
import bisect
import json
import os
import sys

KERNEL_HALF = 1 << 63
TOP = 40


class Symbols:
    def __init__(self, lines):
        syms = []
        for line in lines:
            f = line.split()
            if len(f) < 3:
                continue
            module = f[3].strip("[]") if len(f) > 3 else "vmlinux"
            syms.append((int(f[0], 16), f[2], module))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def name(self, vaddr):
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        if i < 0:
            return "[kernel ?]", "vmlinux"
        _, name, module = self.syms[i]
        return name, module


def charge(lines, syms):
    """{function: instructions}, {module: instructions} of one profile."""
    funcs, modules = {}, {}
    for line in lines:
        vaddr, insns, starts = line.split()
        vaddr, n = int(vaddr, 16), int(insns) * int(starts)
        if vaddr & KERNEL_HALF:
            name, module = syms.name(vaddr)
            key = name if module == "vmlinux" else "%s [%s]" % (name, module)
        else:
            key, module = "[user]", "user"
        funcs[key] = funcs.get(key, 0) + n
        modules[module] = modules.get(module, 0) + n
    return funcs, modules


def minus(a, b):
    return {k: a.get(k, 0) - b.get(k, 0) for k in set(a) | set(b)}


def load(run):
    """(the two runs' JSON records, {function: instructions},
    {module: instructions}) for one profiled run folder: the long run's
    less the short one's."""
    records, ksyms = [], []
    with open(os.path.join(run, "profile-guest.txt")) as f:
        for line in f:
            if line.startswith("{"):
                records.append(json.loads(line))
            else:
                ksyms.append(line)
    failed = [r["error"] for r in records if r.get("error")]
    if len(records) != 2 or failed:
        sys.exit("%s: the profiled runs failed: %s" % (run, failed or "%d runs" % len(records)))
    profiles = []
    with open(os.path.join(run, "profile.out")) as f:
        for line in f:
            if line.startswith("#"):
                profiles.append([])
            elif profiles:
                profiles[-1].append(line)
    if len(profiles) != 2:
        sys.exit("%s: %d profiles where its two runs make two" % (run, len(profiles)))
    syms = Symbols(ksyms)
    (f1, m1), (f2, m2) = (charge(p, syms) for p in profiles)
    return records, minus(f2, f1), minus(m2, m1)


def per_message(records):
    # A round trip is two messages (bench/insn_guest.py).
    return 2 * (records[1]["iters"] - records[0]["iters"])


def table(counts, msgs, total):
    rows = ["| instructions per message | share | |", "|---:|---:|---|"]
    for key, n in sorted(counts.items(), key=lambda kv: -abs(kv[1]))[:TOP]:
        rows.append("| %.0f | %.1f %% | `%s` |" % (n / msgs, 100.0 * n / total, key))
    return rows


def diff_table(before, after, msgs_b, msgs_a):
    keys = set(before) | set(after)
    delta = {k: after.get(k, 0) / msgs_a - before.get(k, 0) / msgs_b for k in keys}
    rows = ["| before | after | change | |", "|---:|---:|---:|---|"]
    for k in sorted(keys, key=lambda k: -abs(delta[k]))[:TOP]:
        rows.append("| %.0f | %.0f | %+.0f | `%s` |" % (
            before.get(k, 0) / msgs_b, after.get(k, 0) / msgs_a, delta[k], k))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("--against", help="an earlier profiled run's folder")
    p.add_argument("--module", default="sroce",
                   help="the module whose functions get a table of their own "
                   "(default sroce; rdma_rxe for rxe)")
    a = p.parse_args(argv)
    records, funcs, modules = load(a.run)
    msgs = per_message(records)
    record = records[0]
    total = sum(funcs.values())
    out = ["# Instructions per message by function: %s, %d B, %d messages"
           % (record["transport"], record["size"], msgs), "",
           "From `scripts/bench --insns --profile` (bench/insn_profile.py): %.0f "
           "instructions per message in all, both ends, kernel and user: a run of %d "
           "round trips less one of %d." % (total / msgs, records[1]["iters"], records[0]["iters"]),
           "", "## By module", ""] + table(modules, msgs, total)
    if a.against:
        recs_b, funcs_b, modules_b = load(a.against)
        msgs_b = per_message(recs_b)
        rec_b = recs_b[0]
        out += ["", "## Against %s (%s, %d B)" % (a.against, rec_b["transport"], rec_b["size"]),
                "", "%.0f instructions per message before, %.0f after." % (
                    sum(funcs_b.values()) / msgs_b, total / msgs), ""]
        out += diff_table(modules_b, modules, msgs_b, msgs) + [""]
        out += diff_table(funcs_b, funcs, msgs_b, msgs)
    own = {k: v for k, v in funcs.items() if k.endswith(" [%s]" % a.module)}
    if own:
        out += ["", "## %s's functions" % a.module, ""] + table(own, msgs, total)
    out += ["", "## By function", ""] + table(funcs, msgs, total)
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.run, "profile.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
