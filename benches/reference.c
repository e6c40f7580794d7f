// What the hardware allows: B5, B8, B9 and B10 written in C (gcc -O2), each timed against a
// memcpy of its output's bytes interleaved in the same run, as `slc bench` times slc's kernels.
//
// Each gather comes in three forms:
//   plain     one load and one store per element;
//   touch     plus loads of the rows read next, a cache line each, as slc's JIT reads rows
//             ahead (Cranelift has no prefetch instruction, so slc can only load);
//   prefetch  the same reads as __builtin_prefetch (prefetcht0), which does not hold up the
//             instructions after it while the line is on its way.
// The difference between touch and prefetch is what the missing instruction costs.
//
// Build and run: bash benches/reference.sh (prints one JSON line per case and form).

#define _GNU_SOURCE
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define HUGE (1u << 21)

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

// Touched once, on transparent huge pages where the kernel grants them (as slc and NumPy
// allocate large arrays).
static void *alloc_touched(size_t n) {
  size_t rounded = (n + HUGE - 1) / HUGE * HUGE;
  void *p = aligned_alloc(HUGE, rounded);
  if (!p) {
    perror("aligned_alloc");
    exit(1);
  }
  madvise(p, rounded, MADV_HUGEPAGE);
  memset(p, 1, rounded);
  return p;
}

static uint64_t rng_state = 0x5EED;
static uint64_t next_random(void) {  // splitmix64, as slc bench fills its inputs
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// GATHER: B10 only (b10_row_avx512).
enum form { PLAIN, TOUCH, PREFETCH, GATHER };
static const char *form_names[] = {"plain", "touch", "prefetch", "avx512 gather + prefetch"};

// B5: a[2:, ..., newaxis, :10] on f32[64,64,64,64]: 40 bytes of every 256-byte row.
#define B5_ROWS (62 * 64 * 64)
static void b5(const uint8_t *a, uint8_t *out, enum form f) {
  const uint8_t *src = a + 2 * 64 * 64 * 256;
  for (long r = 0; r < B5_ROWS; r++) {
    if (f == PREFETCH) __builtin_prefetch(src + (r + 16) * 256);
    if (f == TOUCH) (void)*(volatile const uint8_t *)(src + (r + 16 < B5_ROWS ? r + 16 : r) * 256);
    memcpy(out + r * 40, src + r * 256, 40);
  }
}

// B8: gather(a, idx, axis=0) on a=f32[100000,256], idx=i64[65536] (in range): rows of 1 KiB,
// the row four indices on read ahead.
#define B8_ROWS 100000
#define B8_TAKE 65536
#define B8_ROW_BYTES 1024
#define B8_AHEAD 4
static int64_t b8_idx[B8_TAKE];
static void b8(const uint8_t *a, uint8_t *out, enum form f) {
  for (long i = 0; i < B8_TAKE; i++) {
    const uint8_t *ahead = a + b8_idx[i + B8_AHEAD < B8_TAKE ? i + B8_AHEAD : i] * B8_ROW_BYTES;
    for (int line = 0; line < B8_ROW_BYTES; line += 64) {
      if (f == PREFETCH) __builtin_prefetch(ahead + line);
      if (f == TOUCH) (void)*(volatile const uint8_t *)(ahead + line);
    }
    memcpy(out + i * B8_ROW_BYTES, a + b8_idx[i] * B8_ROW_BYTES, B8_ROW_BYTES);
  }
}

// B9: gather(a, idx, axis=1) on a=f32[4096,4096], idx=i64[2048] (in range).
#define B9_ROWS 4096
#define B9_COLS 4096
#define B9_TAKE 2048
static int64_t b9_idx[B9_TAKE];
static void b9(const float *a, float *out, enum form f) {
  for (long r = 0; r < B9_ROWS; r++) {
    const float *row = a + r * B9_COLS;
    const char *next = (const char *)(r + 1 < B9_ROWS ? row + B9_COLS : row);
    float *o = out + r * B9_TAKE;
    // A row of 16 KiB over 2048 elements: a line every 8 elements.
    for (long j = 0; j < B9_TAKE; j += 8) {
      if (f == PREFETCH) __builtin_prefetch(next + j * 8);
      if (f == TOUCH) (void)*(volatile const char *)(next + j * 8);
      for (int q = 0; q < 8; q++) o[j + q] = row[b9_idx[j + q]];
    }
  }
}

// B10: gather(a, idx, axis=1, batch_dims=1) on a=f32[512,4096], idx=i64[512,1024], with the
// bounds test every mode needs.
#define B10_ROWS 512
#define B10_COLS 4096
#define B10_TAKE 1024
static const int64_t *b10_idx;

// One row of B10's gather form: eight i64 indices and one vpgatherqd at a time, with the prefetch
// form's reads: two instructions Cranelift does not have. Run only where the CPU has AVX-512F.
__attribute__((target("avx512f"))) static void b10_row_avx512(const float *row, const char *next,
                                                                const int64_t *idx, float *o) {
  const __m512i len = _mm512_set1_epi64(B10_COLS);
  for (long j = 0; j < B10_TAKE; j += 8) {
    __builtin_prefetch(next + j * 16);
    __builtin_prefetch(next + j * 16 + 64);
    __m512i i = _mm512_loadu_si512(idx + j);
    if (__builtin_expect(_mm512_cmpge_epu64_mask(i, len) != 0, 0)) abort();
    _mm256_storeu_ps(o + j, _mm512_i64gather_ps(i, row, 4));
  }
}

static void b10(const float *a, float *out, enum form f) {
  for (long r = 0; r < B10_ROWS; r++) {
    const float *row = a + r * B10_COLS;
    const char *next = (const char *)(r + 1 < B10_ROWS ? row + B10_COLS : row);
    const int64_t *idx = b10_idx + r * B10_TAKE;
    float *o = out + r * B10_TAKE;
    if (f == GATHER) {
      b10_row_avx512(row, next, idx, o);
      continue;
    }
    // A row of 16 KiB over 1024 elements: a line every 4 elements.
    for (long j = 0; j < B10_TAKE; j += 4) {
      if (f == PREFETCH) __builtin_prefetch(next + j * 16);
      if (f == TOUCH) (void)*(volatile const char *)(next + j * 16);
      for (int q = 0; q < 4; q++) {
        uint64_t i = (uint64_t)idx[j + q];
        if (__builtin_expect(i >= B10_COLS, 0)) abort();
        o[j + q] = row[i];
      }
    }
  }
}

typedef void (*kernel)(const void *in, void *out, enum form f);

// Times forms `first` to `last` of `k`.
static void measure(const char *name, kernel k, enum form first, enum form last, const void *in, size_t out_bytes,
                    int samples) {
  void *out = alloc_touched(out_bytes);
  void *copy_src = alloc_touched(out_bytes), *copy_dst = alloc_touched(out_bytes);
  double *kt = malloc(samples * sizeof(double)), *mt = malloc(samples * sizeof(double));
  for (int f = (int)first; f <= (int)last; f++) {
    k(in, out, f);  // warm-up
    for (int s = 0; s < samples; s++) {
      double t0 = now_ns();
      k(in, out, f);
      double t1 = now_ns();
      memcpy(copy_dst, copy_src, out_bytes);
      double t2 = now_ns();
      kt[s] = t1 - t0;
      mt[s] = t2 - t1;
    }
    qsort(kt, samples, sizeof(double), by_value);
    qsort(mt, samples, sizeof(double), by_value);
    printf("{\"case\": \"%s\", \"form\": \"%s\", \"median_ns\": %.0f, \"memcpy_median_ns\": %.0f, "
           "\"ratio\": %.3f}\n",
           name, form_names[f], kt[samples / 2], mt[samples / 2], kt[samples / 2] / mt[samples / 2]);
    fflush(stdout);
  }
  free(kt);
  free(mt);
  free(out);
  free(copy_src);
  free(copy_dst);
}

static void run_b5(const void *in, void *out, enum form f) { b5(in, out, f); }
static void run_b8(const void *in, void *out, enum form f) { b8(in, out, f); }
static void run_b9(const void *in, void *out, enum form f) { b9(in, out, f); }
static void run_b10(const void *in, void *out, enum form f) { b10(in, out, f); }

int main(void) {
  uint8_t *a5 = alloc_touched(64ul * 64 * 64 * 64 * 4);
  measure("B5", run_b5, PLAIN, PREFETCH, a5, (size_t)B5_ROWS * 40, 101);
  free(a5);

  uint8_t *a8 = alloc_touched((size_t)B8_ROWS * B8_ROW_BYTES);
  for (int j = 0; j < B8_TAKE; j++) b8_idx[j] = (int64_t)(next_random() % B8_ROWS);
  measure("B8", run_b8, PLAIN, PREFETCH, a8, (size_t)B8_TAKE * B8_ROW_BYTES, 41);
  free(a8);

  float *a9 = alloc_touched((size_t)B9_ROWS * B9_COLS * 4);
  for (int j = 0; j < B9_TAKE; j++) b9_idx[j] = (int64_t)(next_random() % B9_COLS);
  measure("B9", run_b9, PLAIN, PREFETCH, a9, (size_t)B9_ROWS * B9_TAKE * 4, 41);
  free(a9);

  float *a10 = alloc_touched((size_t)B10_ROWS * B10_COLS * 4);
  int64_t *idx = alloc_touched((size_t)B10_ROWS * B10_TAKE * 8);
  for (size_t j = 0; j < (size_t)B10_ROWS * B10_TAKE; j++) idx[j] = (int64_t)(next_random() % B10_COLS);
  b10_idx = idx;
  enum form last = __builtin_cpu_supports("avx512f") ? GATHER : PREFETCH;
  measure("B10", run_b10, PLAIN, last, a10, (size_t)B10_ROWS * B10_TAKE * 4, 1001);
  return 0;
}
