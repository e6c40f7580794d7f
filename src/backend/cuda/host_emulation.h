/* slc host emulation of CUDA: included before generated CUDA C, it makes the source a host C
 * (or C++) program whose grid runs as loops, block by block and thread by thread, each
 * backwards (last block first, last thread first: so that a kernel whose result depended on
 * its threads running in C order, as a store's naive last write would, fails its tests). Generated kernels use no barriers and no shared memory, so any sequential schedule
 * is one the GPU could run; atomics are plain read-modify-writes. Not reentrant: the built-in
 * index variables are globals of the translation unit. */
#ifndef SLC_HOST_EMULATION_H
#define SLC_HOST_EMULATION_H
#define SLC_HOST_EMULATION 1
#include <string.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define SLC_ALIGN(n) __attribute__((aligned(n)))

typedef struct { unsigned int x, y, z; } slc_uint3;
static slc_uint3 threadIdx, blockIdx, blockDim, gridDim;

static inline unsigned long long atomicMin(unsigned long long* at, unsigned long long value) {
  unsigned long long old = *at;
  if (value < old) *at = value;
  return old;
}

/* The owner marks of a store's gathered destinations (codegen/store.rs). */
static inline unsigned int slc_atomic_max32(unsigned int* at, unsigned int value) {
  unsigned int old = *at;
  if (value > old) *at = value;
  return old;
}
static inline unsigned long long slc_atomic_max64(unsigned long long* at, unsigned long long value) {
  unsigned long long old = *at;
  if (value > old) *at = value;
  return old;
}

/* Runs KERNEL over a grid of `grid` blocks of `block` threads: the launch syntax of the host
 * code slc generates (`kernel<<<grid, block, 0, stream>>>(args)` under nvcc). */
#define SLC_LAUNCH(kernel, grid, block, stream, args)                                    \
  do {                                                                                   \
    unsigned int slc_b, slc_t;                                                           \
    gridDim.x = (grid); gridDim.y = 1; gridDim.z = 1;                                    \
    blockDim.x = (block); blockDim.y = 1; blockDim.z = 1;                                \
    for (slc_b = gridDim.x; slc_b-- > 0;) {                                              \
      blockIdx.x = slc_b; blockIdx.y = 0; blockIdx.z = 0;                                \
      for (slc_t = blockDim.x; slc_t-- > 0;) {                                           \
        threadIdx.x = slc_t; threadIdx.y = 0; threadIdx.z = 0;                           \
        kernel(args);                                                                    \
      }                                                                                  \
    }                                                                                    \
  } while (0)

#ifdef __cplusplus
#define SLC_EMULATE_LINKAGE extern "C"
#else
#define SLC_EMULATE_LINKAGE
#endif
/* Defines `void KERNEL_emulate(const unsigned long long* words, unsigned grid, unsigned block)`:
 * KERNEL launched with its argument block copied from `words`. */
#define SLC_EMULATE(kernel, args_t)                                                              \
  SLC_EMULATE_LINKAGE void kernel##_emulate(const unsigned long long* words, unsigned int grid, \
                                            unsigned int block) {                               \
    args_t a;                                                                                    \
    memcpy(&a, words, sizeof a);                                                                 \
    SLC_LAUNCH(kernel, grid, block, 0, a);                                                       \
  }

/* The few runtime calls of the generated host launcher: device memory is host memory. */
typedef void* cudaStream_t;
typedef int cudaError_t;
#define cudaSuccess 0
#define cudaMemcpyDeviceToHost 2
#define cudaGetSymbolAddress(at, symbol) (*(at) = (void*)(symbol), cudaSuccess)
#define cudaMemsetAsync(at, value, bytes, stream) (memset((at), (value), (bytes)), cudaSuccess)
#define cudaMemcpyAsync(to, from, bytes, kind, stream) (memcpy((to), (from), (bytes)), cudaSuccess)
#define cudaStreamSynchronize(stream) cudaSuccess
#define cudaGetLastError() cudaSuccess
#endif
