"""Zarr stores as slc.eval inputs (docs/zarr.md), against zarr-python on the same stores: a few
hundred random selections (slices with steps, integers, row gathers) over v2 and v3 arrays
with several codecs, by path and as zarr.Array. Skipped when zarr is not installed."""

import functools
import http.server
import os
import random
import shutil
import threading

import numpy as np
import pytest

zarr = pytest.importorskip("zarr")
import slc  # noqa: E402


def _stores(tmp):
    """(name, zarr.Array) over the same data, v3 and v2, with different chunkings and codecs."""
    rng = np.random.default_rng(7)
    data = rng.standard_normal((53, 17, 6)).astype(np.float32)
    ints = rng.integers(-1000, 1000, (41, 29)).astype(np.int16)
    made = []
    for name, array, chunks, fmt, compressors in [
        ("v3-zstd", data, (8, 5, 6), 3, "auto"),
        ("v3-raw", data, (7, 17, 2), 3, None),
        ("v3-gzip-int", ints, (10, 10), 3, [zarr.codecs.GzipCodec(level=4)]),
        ("v2-blosc", data, (16, 4, 3), 2, "auto"),
        ("v2-raw-int", ints, (9, 8), 2, None),
    ]:
        path = os.path.join(tmp, f"{name}.zarr")
        z = zarr.create_array(
            path, shape=array.shape, chunks=chunks, dtype=array.dtype, zarr_format=fmt, compressors=compressors
        )
        z[...] = array
        made.append((name, z, path))
    return made


def _slice_text(rng, n):
    start = rng.choice([None, rng.randrange(-n - 2, n + 2)])
    stop = rng.choice([None, rng.randrange(-n - 2, n + 2)])
    step = rng.choice([None, 1, 2, 3, 7, -1, -2, -5])
    text = lambda v: "" if v is None else str(v)  # noqa: E731
    s = slice(start, stop, step)
    return f"{text(start)}:{text(stop)}" + ("" if step is None else f":{step}"), s


def _selection(rng, shape):
    """A random basic selection: its text, the Python index, and whether zarr-python takes it."""
    parts, index, zarr_ok = [], [], True
    for n in shape:
        kind = rng.random()
        if kind < 0.2 and n > 0:
            i = rng.randrange(-n, n)
            parts.append(str(i))
            index.append(i)
        elif kind < 0.3:
            parts.append(":")
            index.append(slice(None))
        else:
            text, s = _slice_text(rng, n)
            parts.append(text)
            index.append(s)
            zarr_ok &= s.step is None or s.step > 0
    return "a[" + ", ".join(parts) + "]", tuple(index), zarr_ok


def test_random_selections_match_zarr_python(tmp_path):
    rng = random.Random(11)
    checked = 0
    for name, z, path in _stores(str(tmp_path)):
        whole = z[...]
        for k in range(60):
            text, index, zarr_ok = _selection(rng, z.shape)
            # zarr-python's answer, where it takes the selection (it refuses negative steps).
            want = z[index] if zarr_ok else whole[index]
            source = z if k % 2 else path
            got = slc.eval(text, a=source)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: {text}")
            assert got.dtype == want.dtype and got.shape == np.shape(want), f"{name}: {text}"
            checked += 1
    assert checked == 300


def test_row_gathers_match_zarr_python(tmp_path):
    rng = np.random.default_rng(3)
    for name, z, path in _stores(str(tmp_path)):
        n = z.shape[0]
        for _ in range(20):
            rows = rng.integers(-n, n, rng.integers(1, 12))
            cols = slice(1, None, 2)
            want = z.oindex[np.where(rows < 0, rows + n, rows), cols]
            got = slc.eval("a[i, 1::2]", a=path, i=rows)
            np.testing.assert_array_equal(got, want, err_msg=f"{name}: rows {rows}")


def test_only_the_chunks_read_need_to_exist(tmp_path):
    z = zarr.create_array(str(tmp_path / "s.zarr"), shape=(40, 10), chunks=(10, 10), dtype="i4")
    z[...] = np.arange(400, dtype=np.int32).reshape(40, 10)
    # Chunk rows 0, 2, 3 gone: rows 10..20 (chunk row 1) still read, and only they.
    for key in ["c/0/0", "c/2/0", "c/3/0"]:
        os.remove(tmp_path / "s.zarr" / key)
    np.testing.assert_array_equal(slc.eval("a[12:18:2, 3]", a=z), [123, 143, 163])


def test_store_errors_name_the_store(tmp_path):
    path = tmp_path / "e.zarr"
    z = zarr.create_array(str(path), shape=(8,), chunks=(4,), dtype="f8", compressors=None)
    z[...] = np.arange(8.0)
    with open(path / "c" / "1", "wb") as f:
        f.write(b"short")
    with pytest.raises(OSError, match=r"chunk 'c/1'"):
        slc.eval("a[5:]", a=str(path))
    np.testing.assert_array_equal(slc.eval("a[:4]", a=str(path)), np.arange(4.0))
    with pytest.raises(OSError, match="nothing.zarr"):
        slc.eval("a", a=str(tmp_path / "nothing.zarr"))
    with pytest.raises(TypeError, match="not a Zarr store"):
        slc.eval("a", a=str(tmp_path))
    shutil.rmtree(path)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_a_store_url_is_read_or_refused_saying_why(tmp_path, monkeypatch):
    """A store's http:// URL, served from 127.0.0.1: read as the local store is by a wheel built
    with the zarr-http feature; refused, saying how to build one, by a wheel without it."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    z = zarr.create_array(str(tmp_path / "u.zarr"), shape=(40, 10), chunks=(10, 10), dtype="i4")
    z[...] = np.arange(400, dtype=np.int32).reshape(40, 10)
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/u.zarr"
        try:
            got = slc.eval("a[12:38:3, ::-2]", a=url)
        except OSError as e:
            assert "built without HTTP stores" in str(e) and url in str(e), str(e)
        else:
            np.testing.assert_array_equal(got, z[...][12:38:3, ::-2])
        finally:
            server.shutdown()
