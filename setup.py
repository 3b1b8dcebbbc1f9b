"""Builds the tessel Python module with CMake for the Python that runs pip.

    python3 -m pip install --no-build-isolation .

configures a Release build in build-python/ (libraries and the _tessel module only, no tests), or
reuses an existing CMake build folder named by TESSEL_CMAKE_BUILD_DIR (e.g. build/), and copies
_tessel into the package. Needs the Debian packages of scripts/setup.sh; downloads nothing.
"""
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).parent.resolve()
(ROOT / "build-python").mkdir(exist_ok=True)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        reuse = os.environ.get("TESSEL_CMAKE_BUILD_DIR")
        if reuse:
            # An existing build keeps its options and its Python (checked below).
            build = pathlib.Path(reuse).resolve()
        else:
            build = ROOT / "build-python" / "cmake"
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                # -O2 as the tested RelWithDebInfo build, without its debug info (GCC 12 at -O3
                # also warns falsely about std::string copies, -Wrestrict).
                "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG",
                "-DTESSEL_BUILD_TESTS=OFF", "-DTESSEL_BUILD_BENCH=OFF",
                "-DTESSEL_PYTHON=ON", f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", str(build), "--target", "_tessel",
                               "-j", str(os.cpu_count() or 1)])
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build / "python" / "tessel" / f"_tessel{suffix}"
        if not built.exists():
            sys.exit(f"{built} is missing: {build} builds the module for another Python "
                     f"(its Python_EXECUTABLE) than {sys.executable}")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    ext_modules=[Extension("tessel._tessel", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own scratch space; not build/, the CMake build folder of the repository.
    options={"build": {"build_base": "build-python"}, "egg_info": {"egg_base": "build-python"}},
)
