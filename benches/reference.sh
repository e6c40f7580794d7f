#!/usr/bin/env bash
# B5, B8, B9 and B10 in C (benches/reference.c): what the memory system allows with and without a
# prefetch instruction, against memcpy in the same run. One JSON line per case and form.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p target
gcc -O2 -o target/reference benches/reference.c
exec target/reference
