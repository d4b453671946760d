"""A short run of every libFuzzer target (tests/fuzz/fuzz_*.c), built from
the same kernel/proto sources as the module, over its checked-in seeds.
Long runs: scripts/fuzz."""
import concurrent.futures
import glob
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "tests", "fuzz")
TARGETS = sorted(os.path.basename(p)[:-2]
                 for p in glob.glob(os.path.join(FUZZ, "fuzz_*.c")))


def seeds(target):
    """fuzz_parse -> corpus/, fuzz_NAME -> corpus-NAME/."""
    name = target[len("fuzz_"):]
    return os.path.join(FUZZ, "corpus" if name == "parse" else "corpus-" + name)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("fuzz")
    subprocess.run([os.path.join(FUZZ, "build.sh"), str(out)], check=True,
                   capture_output=True)
    return out


def test_every_target_has_seeds():
    assert len(TARGETS) >= 2, TARGETS
    for t in TARGETS:
        assert len(os.listdir(seeds(t))) >= 10, t


def test_parse_seeds_include_real_captures():
    """Packets as sroce and rxe really send them, beside the synthetic
    ones (tests/fuzz/capture_corpus.py regenerates them)."""
    captured = [f for f in os.listdir(seeds("fuzz_parse")) if f.startswith("capture-")]
    for sender in ("sroce", "rxe"):
        assert len([f for f in captured if f.startswith("capture-%s-" % sender)]) >= 5, captured


def fuzz(binary, corpus, target):
    corpus.mkdir()
    return subprocess.run([str(binary), "-max_total_time=15",
                           "-print_final_stats=1", str(corpus), seeds(target)],
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(built, tmp_path_factory):
    """{target: its 15 s run}.  Each fuzzer is one process on one core,
    so they run as many at a time as the host has cores: each still has
    a core for its 15 s (the 4 took 60 s one after the other on 2)."""
    work = tmp_path_factory.mktemp("fuzz-corpora")
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futures = {t: pool.submit(fuzz, built / t, work / t, t) for t in TARGETS}
        return {t: f.result() for t, f in futures.items()}


@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_smoke(runs, target):
    r = runs[target]
    assert r.returncode == 0, r.stderr[-4000:]
    executed = [l for l in r.stderr.splitlines() if "stat::number_of_executed_units" in l]
    assert executed and int(executed[0].split(":")[-1]) > 1000, r.stderr[-2000:]
