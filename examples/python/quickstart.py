"""slc from Python: evaluate a slice program over NumPy arrays, compile one and call it, and
catch a mistake with the diagnostic the CLI would print."""

import numpy as np

import slc

a = np.arange(20, dtype=np.float32).reshape(4, 5)
print(slc.eval("a[1:, ::-1]", a=a))

k = slc.compile("a[::2, idx]", a=a, idx=np.array([0, -1]))
print(k.shape, k.dtype)
print(k(a=a, idx=np.array([4, 0])))

try:
    slc.eval("a[5]", a=a)
except slc.IndexError as e:
    print(e.code, e.message)
