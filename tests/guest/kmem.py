"""Parsers for what the guest says about kernel memory and RDMA objects:
/proc/meminfo, /proc/slabinfo, `rdma resource show` and `rdma statistic
show`.  Pure text in, dicts out, so the host tests them without a guest
(tests/test_kmem.py); used by test_faults.py and the soak report."""
import collections
import re

# One /proc/slabinfo line: objects in use, object size, objects per slab.
Cache = collections.namedtuple("Cache", "active size per_slab")


def meminfo(text):
    """{field: kB} from /proc/meminfo."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(\w+):\s+(\d+)", text, re.M)}


def slabinfo(text):
    """{cache: Cache} from /proc/slabinfo 2.1."""
    caches = {}
    for line in text.splitlines():
        if line.startswith(("slabinfo", "#")):
            continue
        f = line.split()
        if len(f) >= 5 and all(x.isdigit() for x in f[1:5]):
            caches[f[0]] = Cache(int(f[1]), int(f[3]), int(f[4]))
    return caches


def kmalloc_caches(caches):
    """The generic kmalloc caches: where the objects a module (or the RDMA
    core for it) kmallocs land, so their leaks show up here."""
    return {name: c for name, c in caches.items()
            if name.startswith(("kmalloc-", "dma-kmalloc-"))}


def kmalloc_bytes(caches):
    return sum(c.active * c.size for c in kmalloc_caches(caches).values())


def own_caches(caches, prefix="sroce"):
    """{cache: active objects} of the module's named caches."""
    return {name: c.active for name, c in caches.items() if name.startswith(prefix)}




# Where RDMA objects come from: sroce and the RDMA core modules it drives.
RDMA_MODULES = ("sroce", "ib_core", "ib_uverbs", "rdma_cm", "ib_cm", "iw_cm",
                "rdma_ucm", "ib_umad")
# Wrappers that call kmalloc for their caller: the owner is further out.
_ALLOC_HELPER = re.compile(
    r"^_*(kv?[mzc]alloc|kmalloc|kvcalloc|kmemdup|kstrn?dup|kv?realloc|"
    r"kv?asprintf|kmem_cache_alloc|slab_alloc|kmalloc_trace|kmalloc_node)")
_FRAME = re.compile(r"\s*(?:(\d+) )?([\w.]+)\+0x[0-9a-f]+/0x[0-9a-f]+(?: \[(\w+)\])?")


def alloc_owners(text):
    """{owner: objects} from a SLUB alloc_traces file (debugfs
    slab/<cache>/alloc_traces, kept with slub_debug=U): every live object
    counted once, under the first function outside the allocator and its
    wrappers (kvmalloc, kmemdup...), as "function [module]" ("function"
    for the kernel itself).  Each entry is a count and the allocating
    call site, then the call stack it was allocated from; the stack names
    the owner of objects that a wrapper allocated."""
    owners = collections.Counter()
    for block in re.split(r"\n[ \t]*\n", text):
        frames = [m for m in map(_FRAME.match, block.splitlines()) if m]
        if not frames or not frames[0].group(1):
            continue
        owner = None
        site = frames[0].group(2)
        if not _ALLOC_HELPER.match(site):
            owner = frames[0]
        else:
            # In the stack: past the site, the first frame that is not
            # the allocator's own.
            past = False
            for f in frames[1:]:
                past = past or f.group(2) == site
                if past and not _ALLOC_HELPER.match(f.group(2)):
                    owner = f
                    break
        if owner is not None:
            name = owner.group(2) + (" [%s]" % owner.group(3) if owner.group(3) else "")
            owners[name] += int(frames[0].group(1))
    return dict(owners)


def kfence_owners(text):
    """{cache: {owner: objects}} of the live objects in KFENCE's pool
    (debugfs kfence/objects; the debug kernel), owned as alloc_owners()
    owns them.  KFENCE serves one sampled allocation per interval (100 ms)
    from its own pool, and SLUB's alloc_traces never lists those: without
    them a count compared with a baseline moves by whichever objects KFENCE
    happened to take before and after (test_faults saw ib_core's GID table
    of one device there: 1 at the baseline, 2 afterwards, no leak)."""
    out = collections.defaultdict(collections.Counter)
    for obj in re.split(r"\n(?=kfence-#)", text):
        head = re.match(r"kfence-#\d+: \S+, size=\d+, cache=(\S+)", obj)
        if not head or "\nallocated by task" not in obj or "\nfreed by task" in obj:
            continue
        stack = obj.split("\nallocated by task", 1)[1].split("\n", 1)[-1]
        stack = stack.split("\n\n", 1)[0].strip("\n")
        if not stack:
            continue
        # As an alloc_traces entry: a count and the call site, then the
        # stack (KFENCE's starts at the allocator's caller).
        first = stack.splitlines()[0].strip()
        for owner, n in alloc_owners("1 %s\n%s" % (first, stack)).items():
            out[head.group(1)][owner] += n
    return {cache: dict(owners) for cache, owners in out.items()}


def rdma_owned(owners):
    """The part of alloc_owners() that sroce or the RDMA core allocated."""
    return {o: n for o, n in owners.items()
            if any(o.endswith("[%s]" % m) for m in RDMA_MODULES)}


def _per_device(text, line_re):
    """{device: {name: value}} from lines `line_re` splits into the
    device and its "name value ..." pairs."""
    out = {}
    for line in text.splitlines():
        m = re.match(line_re, line)
        if m:
            out[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(2))}
    return out


def resources(text):
    """{device: {object: count}} from `rdma resource show`."""
    return _per_device(text, r"\d+: (\w+): (.*)")


def statistics(text):
    """{device: {counter: value}} from `rdma statistic show link DEV/PORT`."""
    return _per_device(text, r"link (\w+)/\d+ (.*)")


if __name__ == "__main__":
    # In the guest: {cache: {owner: objects}} of every kmalloc cache's live
    # objects that sroce or the RDMA core allocated, as JSON.  Read there,
    # so that the kernel's whole allocation record never crosses the RPC.
    import glob
    import json
    import sys
    out = {}
    for path in sorted(glob.glob("/sys/kernel/debug/slab/kmalloc-*/alloc_traces")):
        with open(path) as f:
            owned = rdma_owned(alloc_owners(f.read()))
        if owned:
            out[path.split("/")[-2]] = owned
    try:
        with open("/sys/kernel/debug/kfence/objects") as f:
            kfence = kfence_owners(f.read())
    except OSError:         # no KFENCE: Debian's kernel
        kfence = {}
    for cache, owners in kfence.items():
        for owner, n in rdma_owned(owners).items():
            if cache.startswith("kmalloc-"):
                out.setdefault(cache, {})
                out[cache][owner] = out[cache].get(owner, 0) + n
    json.dump(out, sys.stdout)
