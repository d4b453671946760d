#!/usr/bin/python3
"""Runs modules of rdma-core's pyverbs suite, each in a process of its own,
as `python3 run_tests.py --dev DEV -v MODULE` would, one after the other:

    cd <copy of the suite> && python3 pyverbs_modules.py DEV MARK MODULE...

prints MARK + MODULE before each module's output (test_pyverbs.py splits
the output there).  The suite's package imports every one of its ~60 test
modules (mlx5's, EFA's... too) whichever one runs, ~1.5 s of Python under
TCG: started afresh per module and device, that was most of the test's
time.  So this process imports the suite once, with the same arguments
run_tests.py parses, and forks a child per module, which runs it with
unittest as run_tests.py does: a module that crashes its process (Debian
13's pyverbs segfaulted in test_fork) still costs only itself.
"""
import os
import sys
import unittest
from importlib.machinery import SourceFileLoader


def run_module(tests, argv, module):
    """In a child: runs @module and leaves with unittest's status."""
    status = 1
    try:
        unittest.main(module=tests, argv=argv + [module])
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def main():
    dev, mark, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
    suite = os.getcwd()
    sys.path.insert(0, suite)
    from args_parser import parser    # the suite's own, as run_tests.py
    sys.argv = [os.path.join(suite, "run_tests.py"), "--dev", dev, "-v"]
    parser.parse_args()               # leaves sys.argv = [prog, "--verbose"]
    argv = list(sys.argv)
    tests = SourceFileLoader("tests", os.path.join(suite, "__init__.py")).load_module()
    for module in modules:
        print(mark + module, flush=True)
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            run_module(tests, argv, module)
        os.waitpid(pid, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
