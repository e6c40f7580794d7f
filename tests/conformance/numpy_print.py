#!/usr/bin/env python3
"""NumPy's `str(x)` of random float and complex arrays, for tests/numpy_print.rs (slc prints
results as NumPy prints them: `slc eval`, the REPL).

Each line of numpy_print.jsonl: {"dtype": "float16", "shape": [...], "hex": the array's bytes
(little-endian, C order), "str": NumPy's text}. The values mix what exercises its rules: the
shortest digits that read back in the value's own dtype, the 8-digit cap, positional against
scientific (magnitudes of 1e8 and up, under 1e-4, or spread by over 1e3), exponents of three
digits, signed zeros, NaN and infinities, powers of two (whose lower rounding interval is half
the upper), and values that round up to the next power of ten.

    python3 tests/conformance/numpy_print.py [--seed 5151] [--cases 1500] > tests/conformance/numpy_print.jsonl
"""
import argparse
import json
import sys

import numpy as np


def value(rng, dtype):
    kind = rng.integers(0, 10)
    if kind == 0:
        return rng.choice([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 2.0, 1 / 3, 0.1, 100.5])
    if kind == 1:
        return float(rng.integers(-100000, 100000))
    if kind == 2:
        return float(2.0 ** rng.integers(-30, 40)) * rng.choice([1, -1])
    if kind == 3:
        # Just under a power of ten: rounds up at eight digits.
        return float(10.0 ** rng.integers(-6, 9)) * (1 - 10.0 ** -rng.integers(5, 13))
    if kind == 4:
        # Any bit pattern of the dtype (finite or not).
        width = np.dtype(dtype).itemsize
        raw = rng.integers(0, 256, width, dtype=np.uint8).tobytes()
        return float(np.frombuffer(raw, dtype)[0])
    scale = 10.0 ** rng.integers(-12, 12) if kind < 7 else 10.0 ** rng.integers(-3, 4)
    return float(rng.standard_normal() * scale)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=5151)
    ap.add_argument("--cases", type=int, default=1500)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    for _ in range(args.cases):
        dtype = rng.choice(["float16", "float32", "float64", "complex64", "complex128"])
        part = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        shape = [[], [1], [2], [3], [5], [8], [2, 3], [3, 2], [4, 7], [2, 2, 2]][rng.integers(0, 10)]
        n = int(np.prod(shape))
        with np.errstate(all="ignore"):
            values = np.array([value(rng, part) for _ in range(n)]).astype(part)
            if part != dtype:
                imag = np.array([value(rng, part) for _ in range(n)]).astype(part)
                values = (values + 1j * imag.astype(np.float64)).astype(dtype)
                values.imag = imag
        x = values.reshape(shape)
        line = {"dtype": dtype, "shape": shape, "hex": x.tobytes().hex(), "str": str(x)}
        sys.stdout.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
