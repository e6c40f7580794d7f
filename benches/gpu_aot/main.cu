// A host program for `slc compile --target cuda` output (benches/gpu_device.sh aot): reads
// two raw inputs, a: f32[6, 5] and i: i64[3], launches k on a stream of its own, prints the
// status and writes the output's raw bytes to argv[1]. Built with nvcc against k.cu + k.h.
#include "k.h"
#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::vector<float> a(30);
  for (int x = 0; x < 30; x++) a[x] = (float)x;
  std::vector<long long> idx = {4, -1, atoll(argv[2])};
  void *da, *di, *dout;
  cudaMalloc(&da, 30 * 4);
  cudaMalloc(&di, 3 * 8);
  cudaMalloc(&dout, 3 * 5 * 4);
  cudaMemcpy(da, a.data(), 30 * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(di, idx.data(), 3 * 8, cudaMemcpyHostToDevice);
  cudaStream_t s;
  cudaStreamCreate(&s);
  const void* inputs[2] = {da, di};
  long long dims[3] = {6, 5, 3};
  int launched = k_launch(inputs, dout, dims, s);
  int check = -1;
  unsigned long long element = 0;
  int status = k_status(s, &check, &element);
  std::vector<float> out(15);
  cudaMemcpy(out.data(), dout, 15 * 4, cudaMemcpyDeviceToHost);
  printf("launch %d status %d check %d element %llu\n", launched, status, check, element);
  FILE* f = fopen(argv[1], "wb");
  fwrite(out.data(), 4, 15, f);
  fclose(f);
  // The context stays usable after a failed index: a second launch with good indices.
  idx[2] = 0;
  cudaMemcpy(di, idx.data(), 3 * 8, cudaMemcpyHostToDevice);
  printf("relaunch %d status %d\n", k_launch(inputs, dout, dims, s), k_status(s, &check, &element));
  return 0;
}
