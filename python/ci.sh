#!/usr/bin/env bash
# Builds and tests the Python package as a user would: a fresh virtual environment, the
# README's install command, then pytest. Exits non-zero on any failure.
#   python/ci.sh            (from anywhere; PYTHON=python3.12 picks the interpreter)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
python="${PYTHON:-python3}"
venv="${SLC_PY_VENV:-$here/.ci-venv}"

# python/Cargo.lock pins the versions Cargo.lock pins, for every package both have: the wheel is
# built from the versions the root's tests ran (and reuses their builds, below).
versions() { awk '/^name = /{n=$3} /^version = /{print n, $3}' "$1" | tr -d '"'; }
drift=$(awk 'NR == FNR { root[$1] = root[$1] " " $2; pinned[$1 " " $2] = 1; next }
             ($1 in root) && !(($1 " " $2) in pinned) { print "  " $1 " " $2 " (Cargo.lock:" root[$1] ")" }' \
          <(versions "$here/../Cargo.lock") <(versions "$here/Cargo.lock"))
if [ -n "$drift" ]; then
  echo "python/Cargo.lock pins other versions than Cargo.lock (in python/: cargo update -p NAME --precise VERSION):"
  echo "$drift"
  exit 1
fi

rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# As the README says: pip builds the extension through maturin (the build backend). Into the
# root's target directory and without thin LTO (python/Cargo.toml keeps the root's release
# profile otherwise, python/Cargo.lock its versions): the dependencies the root's release build
# compiled are reused, not built again, where their features agree (minutes in CI).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/../target}"
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
(cd "$here/.." && "$venv/bin/python" -m pip install --quiet ./python)
# zarr: python/tests/test_zarr.py compares slc's reads of Zarr stores with zarr-python's;
# ml_dtypes: bfloat16 arrays (test_inputs.py, and test_stores.py's float literals against it).
"$venv/bin/python" -m pip install --quiet pytest hypothesis numpy 'zarr>=3,<4' ml_dtypes
# Run from the tests' folder, against the installed package (not the source tree's slc/).
cd "$here/tests"
"$venv/bin/python" -m pytest -q -p no:cacheprovider .
