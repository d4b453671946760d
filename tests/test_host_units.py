"""Host unit tests (GoogleTest, through CTest), one pytest item per test so
the summary counts them all."""
import json
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SROCE_BUILD", os.path.join(ROOT, "build"))
CMAKE_BUILD = os.path.join(BUILD, "cmake")


def ctest_names():
    if not os.path.isdir(CMAKE_BUILD):
        return ["<build missing: run scripts/build>"]
    r = subprocess.run(["ctest", "--show-only=json-v1"], cwd=CMAKE_BUILD,
                       capture_output=True, text=True, check=True)
    return [t["name"] for t in json.loads(r.stdout)["tests"]] or ["<no tests>"]


@pytest.mark.parametrize("name", ctest_names())
def test_unit(name):
    assert not name.startswith("<"), name
    r = subprocess.run(["ctest", "--output-on-failure",
                        "-R", "^%s$" % re.escape(name)],
                       cwd=CMAKE_BUILD, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "100% tests passed" in r.stdout, r.stdout
