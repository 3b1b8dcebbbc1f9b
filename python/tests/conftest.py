import os
import pathlib

import pytest

# The repository (models/, README.md): ctest sets TESSEL_SOURCE_DIR; else this file's checkout.
SOURCE_DIR = pathlib.Path(os.environ.get("TESSEL_SOURCE_DIR", pathlib.Path(__file__).parents[2]))
ONNX_NODE_TESTS = pathlib.Path("/usr/share/libonnx-testdata/data/node")


@pytest.fixture
def models_dir():
    return SOURCE_DIR / "models"


@pytest.fixture
def onnx_node_model():
    def find(name):
        path = ONNX_NODE_TESTS / name / "model.onnx"
        if not path.exists():
            pytest.skip(f"{path} is missing (Debian's libonnx-testdata)")
        return path

    return find
