"""A pytest plugin for the ASan run of tests/python (cmake/ci_sanitizers.sh, ``-p``).

The interpreter is not instrumented, so the ASan runtime has to be the first library of every
process that loads gpuidle's instrumented module or libgpuidle.so: the script preloads it into
pytest, and this plugin puts it first on LD_PRELOAD of every child that a test starts with an
environment of its own (conftest.python_env drops LD_PRELOAD; some tests set theirs).
"""

import os
import subprocess

RUNTIME = os.environ["GPUIDLE_SANITIZER_PRELOAD"]
_popen_init = subprocess.Popen.__init__


def _popen_init_with_runtime(self, *args, env=None, **kwargs):
    if env is not None:
        env = dict(env)
        theirs = env.get("LD_PRELOAD", "")
        if not theirs.startswith(RUNTIME):
            env["LD_PRELOAD"] = RUNTIME + (":" + theirs if theirs else "")
    _popen_init(self, *args, env=env, **kwargs)


subprocess.Popen.__init__ = _popen_init_with_runtime
