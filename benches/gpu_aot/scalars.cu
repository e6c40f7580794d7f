// A host program for `slc compile --target cuda` output with a run-time scalar bound
// (benches/gpu_device.sh aot): `a[k:, ::-1]` for a: f32[N, M] and k: i64[], launched on a
// 6 x 5 `a` with k = argv[2] given as a host value, its output's raw bytes written to argv[1].
#include "k.h"
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::vector<float> a(30);
  for (int x = 0; x < 30; x++) a[x] = (float)x;
  long long dims[2] = {6, 5};
  long long scalars[1] = {atoll(argv[2])};
  long long out_dims[2] = {-1, -1};
  int sized = k_output_dims(dims, scalars, out_dims);
  if (sized != 0) {
    printf("output_dims %d\n", sized);
    return 1;
  }
  size_t count = (size_t)(out_dims[0] * out_dims[1]);
  void *da, *dout;
  cudaMalloc(&da, 30 * 4);
  cudaMalloc(&dout, count * 4 + 4);
  cudaMemcpy(da, a.data(), 30 * 4, cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
  // k's own slot: the kernel reads no device memory for it.
  const void* inputs[2] = {da, nullptr};
  int launched = k_launch(inputs, dout, dims, scalars, s);
  int check = -1;
  unsigned long long element = 0;
  int status = k_status(s, &check, &element);
  std::vector<float> out(count);
  cudaMemcpy(out.data(), dout, count * 4, cudaMemcpyDeviceToHost);
  printf("k %lld: dims %lld x %lld, launch %d status %d\n", scalars[0], out_dims[0], out_dims[1], launched, status);
  FILE* f = fopen(argv[1], "wb");
  fwrite(out.data(), 4, count, f);
  fclose(f);
  return launched != 0 || status != 0;
}
