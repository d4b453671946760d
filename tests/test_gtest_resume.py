"""scripts/guest/gtest-resume writes "gtest exit STATUS" on a line of its
own, which peer-suites' summary reads to name the test the time budget
cut (or that died): a gtest cut mid-line left the exit at the end of its
output line, and the cut test went unnamed (stop 74's ucp-rest-1).
Checked on the host with a made-up gtest that prints half a line and
sleeps."""
import os
import subprocess

RESUME = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "scripts", "guest", "gtest-resume")


def resume(tmp_path, gtest_script, seconds):
    """The log's lines after gtest-resume ran a made-up gtest."""
    gtest = tmp_path / "gtest"
    gtest.write_text("#!/bin/sh\n" + gtest_script)
    gtest.chmod(0o755)
    log = tmp_path / "gtest.log"
    r = subprocess.run([RESUME, str(gtest), "a/*", str(seconds), str(log)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return log.read_text().splitlines()


def test_the_exit_of_a_cut_gtest_starts_its_own_line(tmp_path):
    lines = resume(tmp_path, "echo '[ RUN      ] a/b.c/0'\nprintf 'half a line'\nsleep 30\n", 1)
    assert lines == ["[ RUN      ] a/b.c/0", "half a line", "gtest exit 124"]


def test_a_whole_last_line_gets_no_blank_line_after_it(tmp_path):
    lines = resume(tmp_path, "echo '[  PASSED  ] 1 test.'\n", 60)
    assert lines == ["[  PASSED  ] 1 test.", "gtest exit 0"]
