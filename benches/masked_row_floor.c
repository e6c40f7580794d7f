/* The floor for B15r (`a[r] = 0`, f32 4096 x 4096, r a random half of the rows) on one thread,
 * in plain C: each selected row filled 16 bytes at a time with ordinary stores (slc's masked
 * row), with non-temporal stores (never reading the lines first), and by memset; against one
 * memcpy of the written bytes. The target is copied afresh before each run (as
 * benches/stores.py does); medians of 15 rounds, interleaved.
 *
 *     gcc -O2 -o /tmp/masked_row_floor benches/masked_row_floor.c && /tmp/masked_row_floor
 */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 4096
#define ROUNDS 15
#define WAYS 4

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(void) {
    size_t bytes = (size_t)N * N * 4;
    float *a = aligned_alloc(64, bytes), *start = aligned_alloc(64, bytes);
    char *from = aligned_alloc(64, bytes / 2), *to = aligned_alloc(64, bytes / 2);
    for (size_t i = 0; i < (size_t)N * N; i++) start[i] = (float)i;
    memset(from, 1, bytes / 2);
    memset(to, 0, bytes / 2);
    unsigned char r[N];
    size_t rows = 0;
    srand(1);
    for (int i = 0; i < N; i++) rows += r[i] = rand() % 2;
    double t[WAYS][ROUNDS];
    for (int round = 0; round < ROUNDS; round++) {
        for (int way = 0; way < WAYS; way++) {
            memcpy(a, start, bytes);
            double t0 = now();
            __m128 zero = _mm_setzero_ps();
            for (int i = 0; way < 3 && i < N; i++) {
                if (!r[i]) continue;
                float *p = a + (size_t)i * N;
                if (way == 0)
                    for (int j = 0; j < N; j += 4) _mm_storeu_ps(p + j, zero);
                else if (way == 1)
                    for (int j = 0; j < N; j += 4) _mm_stream_ps(p + j, zero);
                else
                    memset(p, 0, N * 4);
            }
            if (way == 1) _mm_sfence();
            if (way == 3) memcpy(to, from, rows * N * 4);
            t[way][round] = now() - t0;
        }
    }
    const char *names[WAYS] = {"16-byte stores", "non-temporal stores", "memset", "memcpy of the written bytes"};
    for (int w = 0; w < WAYS; w++) {
        qsort(t[w], ROUNDS, sizeof(double), by_value);
        printf("%-28s %.2f ms\n", names[w], t[w][ROUNDS / 2] * 1e3);
    }
    return a[1] == 0.0f; /* keep the fills */
}
