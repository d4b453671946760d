"""scripts/peer-suites table: one row a summary in build/peers, from the
provenance lines every summary starts with, and whether the sroce rows
ran one code (docs/peers.md asks for one run on one commit).  Checked
with made-up summaries in a folder of the test's own."""
import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "scripts", "peer-suites")
MARKER = "<!-- peer-suites table -->"


def summary(folder, name, device, code, result, suite=None):
    (folder / (name + ".summary")).write_text(
        "suite %s\ndevice %s\nrelease bookworm\ncommit 1234567\n"
        "code %s\nstarted 2026-12-08 02:20 UTC\ntook 951 s\nhost CPU, 2 CPUs\n"
        "result %s\npassed 3\n" % (suite or "UCX gtest %s (x/*)" % name, device, code, result))


def table(folder, *args):
    env = dict(os.environ, SROCE_PEERS_OUT=str(folder))
    return subprocess.run([SCRIPT, "table", *args], capture_output=True, text=True, env=env)


def test_a_row_a_summary_and_one_code(tmp_path):
    summary(tmp_path, "ud", "sroce0", "b655df3", "231 passed, 0 failed")
    summary(tmp_path, "ud-rxe", "rxe0", "-", "99 passed, 1 failed")
    (tmp_path / "old.summary").write_text("passed 82\nfailed 0\n")
    r = table(tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith("| UCX")]
    assert sorted(rows) == [
        "| UCX gtest ud (x/*) | sroce0 | 231 passed, 0 failed | bookworm | 1234567 (b655df3) "
        "| 2026-12-08 02:20 UTC, 951 s |",
        "| UCX gtest ud-rxe (x/*) | rxe0 | 99 passed, 1 failed | bookworm | 1234567 (-) "
        "| 2026-12-08 02:20 UTC, 951 s |"]
    assert "Every sroce row ran the code of b655df3" in r.stdout


def test_rows_of_different_code_are_called_out(tmp_path):
    summary(tmp_path, "rc", "sroce0", "b655df3", "232 passed")
    summary(tmp_path, "ud", "sroce0", "be2447d", "231 passed")
    r = table(tmp_path)
    assert "**The rows ran different code: b655df3 be2447d.**" in r.stdout


def test_the_table_goes_between_the_markers(tmp_path):
    summary(tmp_path, "ud", "sroce0", "b655df3", "231 passed, 0 failed \\n kept")
    doc = tmp_path / "peers.md"
    doc.write_text("before\n%s\nan old table\n%s\nafter\n" % (MARKER, MARKER))
    r = table(tmp_path, str(doc))
    assert r.returncode == 0, r.stderr
    lines = doc.read_text().splitlines()
    assert lines[:2] == ["before", MARKER] and lines[-2:] == [MARKER, "after"]
    assert "an old table" not in lines
    assert any(line.startswith("| UCX gtest ud (x/*) | sroce0 | 231 passed, 0 failed \\n kept |")
               for line in lines), "a backslash is text, not an escape"


def test_a_file_without_its_markers_is_left_alone(tmp_path):
    doc = tmp_path / "peers.md"
    doc.write_text("no markers here\n")
    r = table(tmp_path, str(doc))
    assert r.returncode != 0 and "needs two lines" in r.stderr
    assert doc.read_text() == "no markers here\n"


def test_a_long_suite_name_is_cut_in_the_table(tmp_path):
    name = ":".join("rc/test_ucp_suite_%d.*" % i for i in range(20))
    summary(tmp_path, "long", "sroce0", "b655df3", "1 passed", suite="UCX gtest " + name)
    r = table(tmp_path)
    row = [line for line in r.stdout.splitlines() if line.startswith("| UCX")][0]
    assert row.startswith("| UCX gtest rc/test_ucp_suite_0.*:") and "... | sroce0 | 1 passed |" in row
