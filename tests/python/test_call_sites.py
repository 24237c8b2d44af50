"""The Python call site of CUDA calls (bindings/python/call_sites.cc): what gpuidle records as
the place of each launch, sync and copy while a profile collects."""

from __future__ import annotations

import textwrap

from conftest import run_python


def run_script(tmp_path, main: str, lib: str = "") -> str:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text(textwrap.dedent(lib))
    (tmp_path / "main.py").write_text(textwrap.dedent(main))
    proc = run_python(
        "import runpy, sys; sys.path.insert(0, sys.argv[1]); "
        "runpy.run_path(sys.argv[1] + '/main.py', run_name='__main__')", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_names_the_users_line_and_function(tmp_path):
    out = run_script(tmp_path, """
        from gpuidle import _call_sites
        from gpuidle._native import _gpuidle
        _call_sites.enable()
        def train_step():
            return _gpuidle.call_site_here()
        print(train_step())
        """)
    assert out == f"{tmp_path}/main.py:6 in train_step\n"


def test_skips_library_frames_up_to_the_program(tmp_path):
    # A library (like torch formatting a tensor for print) makes the call: the user's line that
    # called into the library is the site.
    out = run_script(tmp_path, """
        import sys
        sys.path.insert(0, sys.path[0] + "/lib")
        from gpuidle._native import _gpuidle
        from gpuidle import _call_sites
        import helper
        _gpuidle.enable_call_sites(_call_sites.library_prefixes() + [sys.path[0] + "/"])
        def log(x):
            return helper.format(x)
        print(log(1))
        """, lib="""
        from gpuidle._native import _gpuidle
        def format(x):
            return _gpuidle.call_site_here()
        """)
    assert out == f"{tmp_path}/main.py:9 in log\n"


def test_code_without_a_file_has_no_site(tmp_path):
    proc = run_python("from gpuidle import _call_sites\n_call_sites.enable()\n"
                      "from gpuidle._native import _gpuidle\nprint(_gpuidle.call_site_here())")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "None\n"


def test_library_prefixes_cover_the_standard_library_and_gpuidle():
    proc = run_python("import os, gpuidle\nfrom gpuidle import _call_sites\n"
                      "p = _call_sites.library_prefixes()\n"
                      "print(any(os.__file__.startswith(x) for x in p), "
                      "any(gpuidle.__file__.startswith(x) for x in p), all(x.endswith('/') for x in p))")
    assert proc.stdout == "True True True\n", proc.stderr
