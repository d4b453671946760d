"""rdma-core's own pyverbs suite (shipped by Debian), run unmodified
against sroce0 through the installed provider."""
import re

SUITE = "/usr/share/doc/rdma-core/tests"


def test_pyverbs_suite_has_no_failures(guest):
    r = guest.run(
        "rm -rf /tmp/pyverbs && cp -r %s /tmp/pyverbs && cd /tmp/pyverbs && "
        "gunzip -f *.gz && python3 run_tests.py --dev sroce0 -v 2>&1 | tail -n 400"
        % SUITE, timeout=900)
    summary = re.search(r"^Ran (\d+) tests.*?^(OK|FAILED)(.*)$", r.output,
                        re.M | re.S)
    assert summary, r.output[-3000:]
    ran = int(summary.group(1))
    skipped = int((re.search(r"skipped=(\d+)", summary.group(3)) or [0, 0])[1])
    print("pyverbs on sroce0: ran %d, skipped %d, passed %d"
          % (ran, skipped, ran - skipped))
    assert summary.group(2) == "OK", r.output[-6000:]
    # rxe on this Debian passes 86; sroce must not fall far behind it
    # while memory windows are missing (6 tests).
    assert ran - skipped >= 78, r.output[-3000:]
