/* slc host emulation of CUDA: included before generated CUDA C, it makes the source a host C
 * (or C++) program whose grid runs as loops, block by block (last block first) and thread by
 * thread. Generated kernels use no barriers and no shared memory, so any sequential schedule
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

/* Defines `void KERNEL_emulate(const unsigned long long* words, unsigned grid, unsigned block)`:
 * runs KERNEL over a grid of `grid` blocks of `block` threads, its argument block copied from
 * `words`. */
#ifdef __cplusplus
#define SLC_EMULATE_LINKAGE extern "C"
#else
#define SLC_EMULATE_LINKAGE
#endif
#define SLC_EMULATE(kernel, args_t)                                                              \
  SLC_EMULATE_LINKAGE void kernel##_emulate(const unsigned long long* words, unsigned int grid, \
                                            unsigned int block) {                               \
    args_t a;                                                                                    \
    unsigned int b, t;                                                                           \
    memcpy(&a, words, sizeof a);                                                                 \
    gridDim.x = grid; gridDim.y = 1; gridDim.z = 1;                                              \
    blockDim.x = block; blockDim.y = 1; blockDim.z = 1;                                          \
    for (b = grid; b-- > 0;) {                                                                   \
      blockIdx.x = b; blockIdx.y = 0; blockIdx.z = 0;                                            \
      for (t = 0; t < block; t++) {                                                              \
        threadIdx.x = t; threadIdx.y = 0; threadIdx.z = 0;                                       \
        kernel(a);                                                                               \
      }                                                                                          \
    }                                                                                            \
  }
#endif
