/* The floor for B13 (`a[i] = v`: 65,536 random rows of 256 f32 into f32[100000, 256]) on one
 * thread, in plain C: each row copied by memcpy, by 16-byte non-temporal stores, and by memcpy
 * after prefetching the row two ahead for writing; the destination on a 64-byte line and 16
 * bytes past one (where NumPy's large arrays start); against one memcpy of the rows' bytes.
 * Minimums of 21 rounds, interleaved.
 *
 *     gcc -O2 -o /tmp/scatter_floor benches/scatter_floor.c && /tmp/scatter_floor
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROWS 100000
#define N 65536
#define ROW_BYTES (256 * 4)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Ordinary stores to a head up to 16-byte alignment and a short tail, non-temporal between. */
static void row_streamed(char *d, const char *s, size_t n) {
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n) head = n;
    memcpy(d, s, head);
    size_t k = head;
    for (; k + 16 <= n; k += 16) _mm_stream_si128((__m128i *)(d + k), _mm_loadu_si128((const __m128i *)(s + k)));
    memcpy(d + k, s + k, n - k);
}

enum { MEMCPY, STREAMED, PREFETCHED, WAYS };
static const char *const NAMES[WAYS] = {"memcpy per row", "non-temporal", "prefetchw + memcpy"};

int main(void) {
    size_t bytes = (size_t)ROWS * ROW_BYTES;
    char *base = aligned_alloc(64, bytes + 64), *a = aligned_alloc(64, bytes), *v = aligned_alloc(64, (size_t)N * ROW_BYTES);
    char *copy_src = aligned_alloc(64, (size_t)N * ROW_BYTES), *copy_dst = aligned_alloc(64, (size_t)N * ROW_BYTES);
    int64_t *idx = malloc(N * sizeof *idx);
    uint64_t state = 12345;
    memset(a, 3, bytes);
    memset(v, 7, (size_t)N * ROW_BYTES);
    memset(copy_src, 1, (size_t)N * ROW_BYTES);
    memset(copy_dst, 0, (size_t)N * ROW_BYTES);
    for (int k = 0; k < N; k++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        idx[k] = (state >> 33) % ROWS;
    }
    double best[2][WAYS], copy = 1e9;
    for (int o = 0; o < 2; o++)
        for (int w = 0; w < WAYS; w++) best[o][w] = 1e9;
    for (int round = 0; round < 21; round++) {
        for (int o = 0; o < 2; o++)
            for (int w = 0; w < WAYS; w++) {
                char *x = base + 16 * o;
                memcpy(x, a, bytes);
                double t = now();
                for (int k = 0; k < N; k++) {
                    char *d = x + idx[k] * ROW_BYTES;
                    const char *s = v + (size_t)k * ROW_BYTES;
                    if (w == STREAMED) {
                        row_streamed(d, s, ROW_BYTES);
                        continue;
                    }
                    if (w == PREFETCHED && k + 2 < N)
                        for (int l = 0; l < ROW_BYTES; l += 64) _mm_prefetch(x + idx[k + 2] * ROW_BYTES + l, _MM_HINT_ET0);
                    memcpy(d, s, ROW_BYTES);
                }
                _mm_sfence();
                t = now() - t;
                if (t < best[o][w]) best[o][w] = t;
            }
        double t = now();
        memcpy(copy_dst, copy_src, (size_t)N * ROW_BYTES);
        t = now() - t;
        if (t < copy) copy = t;
    }
    printf("memcpy of the rows' bytes: %.2f ms\n", copy * 1e3);
    for (int o = 0; o < 2; o++)
        for (int w = 0; w < WAYS; w++)
            printf("%-20s destination %s: %6.2f ms  %.2fx\n", NAMES[w], o ? "16 B past a line" : "on a line",
                   best[o][w] * 1e3, best[o][w] / copy);
    return base[20] == 42;
}
