"""One kernel called from many threads at once; the GIL released while large calls run."""

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import slc


def test_one_kernel_from_many_threads():
    k = slc.compile("a[1:, ::-1, None]", a=("int32", (64, 48)))
    inputs = [np.random.default_rng(s).integers(0, 1000, (64, 48), dtype=np.int32) for s in range(16)]

    def work(x):
        for _ in range(200):
            r = k(a=x)
            if not np.array_equal(r, x[1:, ::-1, None]):
                return False
        return True

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, inputs))


def test_large_calls_from_threads_with_out_and_threads():
    k = slc.compile("a[::-1, 1:]", a=("float64", (512, 513)))
    x = np.random.default_rng(0).random((512, 513))
    expected = x[::-1, 1:]

    def work(i):
        out = np.empty(k.shape, k.dtype)
        for _ in range(20):
            k(a=x, out=out, threads=1 + i % 3)
            if not np.array_equal(out, expected):
                return False
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(8)))


def test_eval_from_many_threads():
    x = np.arange(1000, dtype=np.uint16).reshape(10, 100)

    def work(i):
        return all(np.array_equal(slc.eval(f"a[{i % 10}, ::{1 + i % 3}]", a=x), x[i % 10, :: 1 + i % 3]) for _ in range(50))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, range(40)))


def test_errors_from_many_threads():
    k = slc.compile("x[i]", x=np.arange(5), i=("int64", (2,)))

    def work(bad):
        try:
            k(x=np.arange(5), i=np.array([0, 5 if bad else 1]))
            return not bad
        except slc.IndexError:
            return bad

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(work, [i % 2 == 0 for i in range(400)]))


def test_gil_is_released_while_a_large_kernel_runs():
    """Another Python thread runs *during* a large kernel call. The switch interval is raised so
    that the interpreter never takes the GIL from the calling thread by itself: the other thread
    can only run while the call has released it (it yields the GIL back after every step)."""
    import sys
    import time

    k = slc.compile("a[::-1]", a=("uint8", (64 << 20,)))
    x = np.zeros(64 << 20, np.uint8)
    out = np.empty_like(x)
    k(a=x, out=out)
    ticks = 0
    stop = False

    def count():
        nonlocal ticks
        while not stop:
            ticks += 1
            time.sleep(0)  # hand the GIL back at once

    interval = sys.getswitchinterval()
    sys.setswitchinterval(10.0)
    try:
        t = threading.Thread(target=count)
        t.start()
        time.sleep(0.05)
        during = []
        for _ in range(5):
            before = ticks
            k(a=x, out=out, threads=1)
            during.append(ticks - before)
        stop = True
        t.join()
    finally:
        sys.setswitchinterval(interval)
    assert max(during) > 0, during


def test_small_calls_keep_the_gil_and_stay_correct_under_switching():
    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch as often as possible
    try:
        test_one_kernel_from_many_threads()
    finally:
        sys.setswitchinterval(interval)


def test_a_forked_child_runs_parallel_calls():
    """slc's worker threads belong to the process that started them: a child forked after a
    parallel call (multiprocessing's fork) runs its own parallel calls whole, on its one thread,
    and does not wait for workers it does not have."""
    import os
    import time
    if not hasattr(os, "fork"):
        return
    a = np.random.default_rng(0).standard_normal((2048, 2048), dtype=np.float32)  # 16 MiB: parallel
    assert np.array_equal(slc.eval("a[::-1]", a=a), a[::-1])
    pid = os.fork()
    if pid == 0:  # the child: exit at once, whatever happens
        try:
            ok = np.array_equal(slc.eval("a[::-1]", a=a), a[::-1])
            os._exit(0 if ok else 3)
        finally:
            os._exit(4)
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            raise AssertionError("the forked child hangs")
        time.sleep(0.01)
    assert os.waitstatus_to_exitcode(status) == 0
