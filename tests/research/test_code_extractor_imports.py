"""What a paper's code names is looked for, never imported: the code extractor's dependency
check runs in the server, on text anyone may send (research/code_extractor.py)."""

import subprocess
import sys


def test_a_module_named_in_a_papers_code_is_looked_for_without_importing_anything() -> None:
    # In a fresh interpreter: setuptools' finder on sys.meta_path imports its own distutils
    # when asked about `distutils` (hundreds of modules), which importlib.util.find_spec
    # asks; and `pip` likewise, on some versions.
    probe = ("import sys\n"
             "from crase.research.code_extractor import module_found\n"
             "before = set(sys.modules)\n"
             "found = [module_found(name) for name in ('distutils', 'pip', 'setuptools', "
             "'numpy', 'surely_not_installed_here')]\n"
             "print(found, sorted(set(sys.modules) - before))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True, timeout=120)
    assert result.stdout.strip() == "[True, True, True, True, False] []", result.stdout
