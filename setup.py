"""Builds the lcrwmd extension with the project's CMake (pyproject.toml has the metadata).

Environment: LCRWMD_CMAKE_ARGS adds CMake options (e.g. "-DLCRWMD_WITH_CUDA=OFF"),
LCRWMD_BUILD_JOBS sets the parallel jobs (default: all cores).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


def version():
    text = (ROOT / "CMakeLists.txt").read_text(encoding="utf-8")
    return re.search(r"project\(lcrwmd VERSION ([0-9.]+)", text).group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    """Configures and builds the _lcrwmd target, then copies it where setuptools wants it."""

    def build_extension(self, ext):
        if shutil.which("cmake") is None:
            sys.exit("lcrwmd: cmake not found; run scripts/install-deps.sh first")
        build_dir = Path(self.build_temp).resolve() / "cmake"
        args = [
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DPython3_EXECUTABLE={sys.executable}",
            "-DLCRWMD_BUILD_PYTHON=ON",
            "-DLCRWMD_BUILD_TESTS=OFF",
            "-DLCRWMD_BUILD_BENCH=OFF",
            "-DLCRWMD_WITH_MPI=OFF",
        ] + shlex.split(os.environ.get("LCRWMD_CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir)] + args, check=True)
        jobs = os.environ.get("LCRWMD_BUILD_JOBS", str(os.cpu_count() or 1))
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "_lcrwmd", "-j", jobs],
                       check=True)
        built = next((build_dir / "python" / "lcrwmd").glob("_lcrwmd*.so"))
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)


setup(
    version=version(),
    ext_modules=[CMakeExtension("lcrwmd._lcrwmd")],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build folder apart from CMake's build/ trees.
    options={"build": {"build_base": "build-python"}},
    zip_safe=False,
)
