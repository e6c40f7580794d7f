// examples/aot/generic.c
// Links the generic kernel that `slc compile --target cpu` wrote for a=f32[N, M] (flip.o,
// flip.h) and runs the one object on inputs of three shapes.
#include <stdio.h>
#include <stdlib.h>
#include "flip.h" /* int32_t flip_shape(...); int32_t flip(inputs, in_dims, out, begin, end); */

int main(void) {
    const int64_t shapes[3][2] = {{3, 4}, {2, 5}, {1, 3}};
    for (int s = 0; s < 3; s++) {
        const int64_t *in_dims[FLIP_NUM_INPUTS] = {shapes[s]};
        int64_t dims[FLIP_OUT_RANK], outer;
        if (flip_shape(in_dims, dims, &outer) != FLIP_STATUS_OK) return 1;
        int64_t n = shapes[s][0] * shapes[s][1], count = dims[0] * dims[1];
        float *a = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)(count + 1));
        for (int64_t i = 0; i < n; i++) a[i] = (float)i;
        const uint8_t *inputs[FLIP_NUM_INPUTS] = {(const uint8_t *)a};
        if (flip(inputs, in_dims, (uint8_t *)out, 0, outer) != FLIP_STATUS_OK) return 2;
        printf("%lldx%lld ->", (long long)dims[0], (long long)dims[1]);
        for (int64_t i = 0; i < count; i++) printf(" %g", out[i]);
        printf("\n");
        free(a);
        free(out);
    }
    /* Dims the kernel cannot take: nothing is written. */
    const int64_t bad[2] = {-1, 4};
    const int64_t *in_dims[FLIP_NUM_INPUTS] = {bad};
    int64_t dims[FLIP_OUT_RANK], outer;
    printf("status %d\n", flip_shape(in_dims, dims, &outer));
    return 0;
}
