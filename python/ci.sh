#!/usr/bin/env bash
# Builds and tests the Python package as a user would: a fresh virtual environment, the
# README's install command, then pytest. Exits non-zero on any failure.
#   python/ci.sh            (from anywhere; PYTHON=python3.12 picks the interpreter)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="${SLC_PY_VENV:-$here/.ci-venv}"

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# As the README says: pip builds the extension through maturin (the build backend).
(cd "$here/.." && "$venv/bin/python" -m pip install --quiet ./python)
# zarr: python/tests/test_zarr.py compares slc's reads of Zarr stores with zarr-python's;
# ml_dtypes: bfloat16 arrays (test_inputs.py, and test_stores.py's float literals against it).
"$venv/bin/python" -m pip install --quiet pytest hypothesis numpy 'zarr>=3,<4' ml_dtypes
# Run from the tests' folder, against the installed package (not the source tree's slc/).
cd "$here/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider .
