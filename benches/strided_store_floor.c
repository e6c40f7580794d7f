/* The floor for B14 (`a[:, ::2] = b`, f32 4096 x 4096, b f32 4096 x 2048) on one thread, in
 * plain C: element by element (NumPy's loop), 16 bytes at a time with the selected lanes
 * blended in (slc's `spread` shuffle), the same with software prefetches 1 KiB and 4 KiB ahead,
 * with the blended vectors written by non-temporal stores, and element by element in a call per
 * run that prefetches 1 to 16 KiB ahead (the JIT's `spread_ahead` takes 4 KiB); against one
 * memcpy of the written bytes (b's). The target is copied afresh before each run (as
 * benches/stores.py does); medians of 31 rounds, interleaved.
 *
 *     gcc -O2 -msse4.1 -o /tmp/strided_store_floor benches/strided_store_floor.c && /tmp/strided_store_floor
 */
#include <smmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define ROUNDS 31

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void elementwise(float *a, const float *b) {
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N / 2; j++) a[i * N + 2 * j] = b[i * N / 2 + j];
}

/* Four values of b into eight elements of a: lanes 0 and 2 of each 16 bytes replaced.
 * `ahead` > 0: prefetch that many floats ahead; `ahead` < 0: non-temporal stores. */
static void blended(float *a, const float *b, long ahead) {
    for (size_t i = 0; i < N; i++) {
        float *d = a + i * N;
        const float *s = b + i * N / 2;
        for (size_t j = 0; j < N; j += 8) {
            if (ahead > 0) {
                __builtin_prefetch(d + j + ahead, 1);
                __builtin_prefetch(s + j / 2 + ahead / 2, 0);
            }
            __m128 v = _mm_loadu_ps(s + j / 2);
            __m128 lo = _mm_blend_ps(_mm_loadu_ps(d + j), _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 1, 0, 0)), 0x5);
            __m128 hi = _mm_blend_ps(_mm_loadu_ps(d + j + 4), _mm_shuffle_ps(v, v, _MM_SHUFFLE(3, 3, 2, 2)), 0x5);
            if (ahead < 0) {
                _mm_stream_ps(d + j, lo);
                _mm_stream_ps(d + j + 4, hi);
            } else {
                _mm_storeu_ps(d + j, lo);
                _mm_storeu_ps(d + j + 4, hi);
            }
        }
    }
}

/* The JIT's `spread_ahead`: element k of s into element 2k of d, a line of d at a time with
 * prefetches of d `ahead` bytes on and of s half as far. */
__attribute__((noinline)) static void spread_run(float *d, const float *s, size_t n, long ahead) {
    for (size_t k = 0; k < n; k += 8) {
        __builtin_prefetch((const char *)(d + 2 * k) + ahead, 1);
        __builtin_prefetch((const char *)(s + k) + ahead / 2, 0);
        size_t e = k + 8 < n ? k + 8 : n;
        for (size_t j = k; j < e; j++) d[2 * j] = s[j];
    }
}

static int compare(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(void) {
    size_t cells = (size_t)N * N, half = cells / 2;
    float *original = aligned_alloc(64, cells * 4), *a = aligned_alloc(64, cells * 4);
    float *b = aligned_alloc(64, half * 4);
    char *from = aligned_alloc(64, half * 4), *to = aligned_alloc(64, half * 4);
    if (!original || !a || !b || !from || !to) return 1;
    for (size_t k = 0; k < cells; k++) original[k] = (float)k;
    for (size_t k = 0; k < half; k++) b[k] = -(float)k;
    memset(from, 1, half * 4);
    memset(to, 0, half * 4);
    memset(a, 0, cells * 4);
    const char *names[] = {"element by element", "blended", "blended, prefetch 1 KiB", "blended, prefetch 4 KiB",
                           "blended, non-temporal", "run call, prefetch 1 KiB", "run call, prefetch 2 KiB",
                           "run call, prefetch 4 KiB", "run call, prefetch 8 KiB", "run call, prefetch 16 KiB",
                           "memcpy of b's bytes"};
    enum { WAYS = 11 };
    static double times[WAYS][ROUNDS];
    for (int r = 0; r < ROUNDS; r++) {
        for (int w = 0; w < WAYS; w++) {
            memcpy(a, original, cells * 4);
            double t = now();
            switch (w) {
            case 0: elementwise(a, b); break;
            case 1: blended(a, b, 0); break;
            case 2: blended(a, b, 256); break;
            case 3: blended(a, b, 1024); break;
            case 4: blended(a, b, -1); break;
            case 5: case 6: case 7: case 8: case 9: spread_run(a, b, half, 1024L << (w - 5)); break;
            default: memcpy(to, from, half * 4);
            }
            times[w][r] = now() - t;
            /* Each way's result checked: even elements from b, odd ones kept. */
            if (w < WAYS - 1 && (a[N + 2] != b[N / 2 + 1] || a[N + 3] != original[N + 3])) return 2;
        }
    }
    for (int w = 0; w < WAYS; w++) qsort(times[w], ROUNDS, sizeof(double), compare);
    double copy = times[WAYS - 1][ROUNDS / 2];
    for (int w = 0; w < WAYS; w++)
        printf("%-26s %.3f ms  %.2fx memcpy\n", names[w], times[w][ROUNDS / 2] * 1e3, times[w][ROUNDS / 2] / copy);
    return 0;
}
