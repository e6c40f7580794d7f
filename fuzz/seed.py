#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets into fuzz/seeds/<target>/ (not committed: the
committed corpora under fuzz/corpus/ grew from these and were minimized with `cargo fuzz cmin`).

  front_end     every program of the golden corpus, the seed conformance cases and tests/cases
  plan_text     the plans `slc plan` prints for those programs with their input types
  npy           the example .npy files, and np.save output for every dtype, byte order, format
                version and a few shapes and orders
  differential  random byte strings (the bytes are decisions of slc::fuzz::Case::draw)

Needs `cargo build --release` (for target/release/slc) and NumPy.
"""

import hashlib
import io
import json
import pathlib
import random
import subprocess

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "seeds"
SLC = ROOT / "target" / "release" / "slc"


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = OUT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def programs():
    """(source, {name: 'dtype[dims]'}) for every program with known input types."""
    for line in (ROOT / "tests/golden/cases.jsonl").read_text().splitlines():
        case = json.loads(line)
        types = {n: f"{s['dtype']}{s['shape']}" for n, s in case["inputs"].items()}
        yield case["src"], types
    src, types = None, {}
    for line in (ROOT / "tests/conformance/seeds.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith("== "):
            src, types = None, {}
        elif line.startswith("in "):
            name, ty = line[3:].split(":", 1)
            types[name.strip()] = ty[: ty.index("]") + 1].strip()
            if src is not None:
                yield src, dict(types)
        elif line.startswith(("src:", "same:")):
            src = line.split(":", 1)[1].strip()
            if types:
                yield src, dict(types)
    for path in sorted((ROOT / "tests/cases").glob("*/*.slc")):
        text = path.read_text()
        header = text.splitlines()[0].removeprefix("# inputs:")
        types, depth, start = {}, 0, 0
        for i, c in enumerate(header + ","):
            depth += {"[": 1, "]": -1}.get(c, 0)
            if c == "," and depth == 0:
                if "=" in header[start:i]:
                    name, ty = header[start:i].split("=", 1)
                    types[name.strip()] = ty.strip()
                start = i + 1
        yield text, types


def npy_files():
    for path in sorted(ROOT.glob("examples/data/*.npy")):
        yield path.read_bytes()
    rng = np.random.default_rng(1)
    dtypes = ["?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8"]
    for dt in dtypes:
        for order in "<>":
            for shape in [(), (0,), (3,), (2, 3), (2, 0, 4), (1, 2, 1, 3)]:
                dtype = np.dtype(dt).newbyteorder(order) if dt != "?" else np.dtype(dt)
                a = (rng.integers(0, 2, shape) if dt == "?" else rng.integers(-50, 50, shape)).astype(dtype)
                for version in [(1, 0), (2, 0), (3, 0)] if shape == (2, 3) else [None]:
                    buf = io.BytesIO()
                    if version is None:
                        np.save(buf, a)
                    else:
                        np.lib.format.write_array(buf, a, version=version)
                    yield buf.getvalue()
    # Fortran order (rejected unless trivially C order too) and a structured dtype (rejected).
    for a in [np.asfortranarray(np.arange(6, dtype="f4").reshape(2, 3)), np.zeros(2, dtype="i4,f4"),
              np.asfortranarray(np.arange(3, dtype="i2").reshape(3, 1))]:
        buf = io.BytesIO()
        np.save(buf, a)
        yield buf.getvalue()


def main():
    seen_plans = set()
    for i, (src, types) in enumerate(programs()):
        put("front_end", src)
        # Every plan of the small sets, a sample of the golden corpus.
        if i % 5 and i < 3000:
            continue
        args = [str(SLC), "plan", src]
        for name, ty in types.items():
            args += ["--shape", f"{name}={ty.replace(' ', '')}"]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode == 0 and r.stdout not in seen_plans:
            seen_plans.add(r.stdout)
            put("plan_text", r.stdout)
    for data in npy_files():
        put("npy", data)
    rnd = random.Random(8)
    for n in [0, 8, 16, 32, 64, 128]:
        for _ in range(40):
            put("differential", bytes(rnd.randrange(256) for _ in range(n)))
    for t in sorted(OUT.iterdir()):
        print(t.name, len(list(t.iterdir())))


if __name__ == "__main__":
    main()
