"""A short run of each libFuzzer target over the packet parser, built from
the same kernel/proto sources as the module (long runs: tests/fuzz/)."""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUZZ = os.path.join(ROOT, "tests", "fuzz")


def test_fuzz_parse_smoke(tmp_path):
    subprocess.run([os.path.join(FUZZ, "build.sh"), str(tmp_path)], check=True,
                   capture_output=True)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    r = subprocess.run([str(tmp_path / "fuzz_parse"), "-max_total_time=15",
                        "-print_final_stats=1", str(corpus),
                        os.path.join(FUZZ, "corpus")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-4000:]
    runs = [l for l in r.stderr.splitlines() if "stat::number_of_executed_units" in l]
    assert runs and int(runs[0].split(":")[-1]) > 1000, r.stderr[-2000:]
