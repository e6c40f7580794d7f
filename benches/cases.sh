# The benchmark cases B1-B12 (docs/benchmarks.md) as `slc bench` takes them: each entry is the
# inputs' `--shape`s (space-separated) and the program, split by `|`. Sourced by compare.sh and
# generic.sh.
cases=(
  "a=f32[4096,4096]|a[:, 1:-1]"
  "a=f32[16777216]|a[::-1]"
  "a=f32[4096,4096]|a[:, ::2]"
  "a=f32[4096,4096]|a[..., ::-1]"
  "a=f32[64,64,64,64]|a[2:, ..., newaxis, :10]"
  "a=f32[4096,4096]|a[:, 0]"
  "img=u8[1080,1920,3]|img[100:900, 200:1800, ::-1]"
  "a=f32[100000,256] idx=i64[65536]|gather(a, idx, axis=0)"
  "a=f32[4096,4096] idx=i64[2048]|gather(a, idx, axis=1)"
  "a=f32[512,4096] idx=i64[512,1024]|gather(a, idx, axis=1, batch_dims=1)"
  "a=f32[4,5]|a[1:3, ::-1]"
  "a=f64[1024,1024,8]|a[::2, ::-1, 1:]"
)
