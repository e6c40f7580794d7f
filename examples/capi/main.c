// examples/capi/main.c
#include <stdio.h>
#include "slc.h"

int main(void) {
    slc_session *s = slc_session_new();
    int64_t shape[2] = {4, 5};
    slc_input_sig sig = {"a", SLC_F32, 2, shape};
    slc_kernel *k = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    if (!k) { fputs(slc_last_error_rendered(), stderr); return 1; }
    float a[20], out[10];
    for (int i = 0; i < 20; i++) a[i] = (float)i;
    slc_tensor in = {SLC_F32, 2, shape, NULL /* dense; or byte strides */, a};
    if (slc_kernel_run(k, &in, 1, out, sizeof out) != SLC_OK) { puts(slc_last_error_message()); return 1; }
    printf("%g (shape %lld x %lld)\n", out[0], (long long)slc_kernel_output_shape(k)[0],
           (long long)slc_kernel_output_shape(k)[1]);
    slc_kernel_free(k);
    slc_session_free(s);
    return 0;
}
