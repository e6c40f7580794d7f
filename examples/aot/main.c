// examples/aot/main.c
// Links the kernel that `slc compile --target cpu` wrote (kernel.o, kernel.h) and runs it.
#include <stdio.h>
#include "kernel.h" /* int32_t flip(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end); */

int main(void) {
    float a[FLIP_IN0_NUMEL], out[FLIP_OUT_NUMEL];
    for (int i = 0; i < FLIP_IN0_NUMEL; i++) a[i] = (float)i;
    const uint8_t *inputs[FLIP_NUM_INPUTS] = {(const uint8_t *)a};
    /* One call over [0, FLIP_OUTER); threads would split it into disjoint ranges, one call each. */
    int32_t status = flip(inputs, (uint8_t *)out, 0, FLIP_OUTER);
    if (status != FLIP_STATUS_OK) {
        fprintf(stderr, "flip failed with status %d\n", status);
        return 1;
    }
    for (int i = 0; i < FLIP_OUT_NUMEL; i++) printf("%g%c", out[i], i + 1 < FLIP_OUT_NUMEL ? ' ' : '\n');
    return 0;
}
