/* slc.h: the C ABI of slc, a slicing language and compiler for tensors.
 *
 * Library: built by `cargo build --release -p slc-capi` as target/release/libslc_c.a (static;
 * link with -lpthread -ldl -lm) and target/release/libslc_c.so (shared).
 *
 * Conventions
 * - Functions that create something return a pointer, NULL on failure. Functions that act
 *   return an slc_status: SLC_OK (0) on success.
 * - On failure the calling thread's last error is set: slc_last_error_message() (one line),
 *   slc_last_error_code() (a diagnostic code such as "E0102", "" if none) and
 *   slc_last_error_rendered() (the diagnostic drawn against the expression, with a caret under
 *   the mistake). A successful call clears it. The strings stay valid until the next slc call
 *   on the same thread.
 * - Null pointers, unknown codes, non-UTF-8 text and buffers of the wrong size are reported as
 *   errors. No panic or exception crosses this boundary (SLC_ERR_INTERNAL reports a bug).
 * - Tensors are described by slc_tensor: element type, shape, optional byte strides (NULL:
 *   dense, C order), data pointer. Elements are little-endian (the host's order). Kernels read
 *   inputs in place, strided ones through a kernel compiled once for their strides (up to 16
 *   layouts per kernel; further ones are packed into a temporary). Byte strides must be
 *   multiples of the element size.
 * - Sessions and kernels may be used from several threads; a kernel can run concurrently.
 */
#ifndef SLC_H
#define SLC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types (the order of slc's DType). */
typedef enum slc_dtype {
    SLC_BOOL = 0,
    SLC_I8 = 1,
    SLC_I16 = 2,
    SLC_I32 = 3,
    SLC_I64 = 4,
    SLC_U8 = 5,
    SLC_U16 = 6,
    SLC_U32 = 7,
    SLC_U64 = 8,
    SLC_F16 = 9,
    SLC_BF16 = 10,
    SLC_F32 = 11,
    SLC_F64 = 12,
    SLC_C64 = 13,  /* complex64: two f32, real then imaginary */
    SLC_C128 = 14  /* complex128: two f64 */
} slc_dtype;

typedef enum slc_status {
    SLC_OK = 0,
    SLC_ERR_ARGUMENT = 1, /* a NULL pointer, an unknown code, text that is not UTF-8 */
    SLC_ERR_PROGRAM = 2,  /* the expression does not parse or check: see the diagnostic */
    SLC_ERR_RUNTIME = 3,  /* an index value out of range, an input or output that does not fit */
    SLC_ERR_INTERNAL = 4  /* a bug in slc (a caught panic) */
} slc_status;

typedef enum slc_backend {
    SLC_BACKEND_JIT = 0,    /* Cranelift machine code (default) */
    SLC_BACKEND_INTERP = 1, /* the reference interpreter */
    SLC_BACKEND_CUDA = 2    /* an NVIDIA GPU (host memory in and out); SLC_ERR_RUNTIME, code
                               E0209, at the first kernel when there is no driver */
} slc_backend;

typedef struct slc_session slc_session;
typedef struct slc_kernel slc_kernel;
typedef struct slc_array slc_array;

/* The declared type of one kernel input. */
typedef struct slc_input_sig {
    const char *name;     /* the name the expression uses */
    int32_t dtype;        /* an slc_dtype */
    size_t rank;
    const int64_t *shape; /* rank dimensions (may be NULL when rank is 0) */
} slc_input_sig;

/* A tensor in caller memory. */
typedef struct slc_tensor {
    int32_t dtype;          /* an slc_dtype */
    size_t rank;
    const int64_t *shape;   /* rank dimensions */
    const int64_t *strides; /* rank byte strides, or NULL for dense C order */
    const void *data;       /* element [0, ..., 0] */
} slc_tensor;

/* Sessions: options, and tensors bound by name. */
slc_session *slc_session_new(void);
void slc_session_free(slc_session *session); /* NULL is ignored */
slc_status slc_session_set_backend(slc_session *session, int32_t backend /* slc_backend */);
/* Worker threads for large outputs (default: the machine's cores). */
slc_status slc_session_set_threads(slc_session *session, size_t threads);

/* Binds `name` to a copy of the tensor (later evaluations see this copy). */
slc_status slc_session_bind(slc_session *session, const char *name, const slc_tensor *tensor);
/* Evaluates a program over the bound tensors; NULL on error. Free with slc_array_free. */
slc_array *slc_session_eval(slc_session *session, const char *expr);

/* Kernels: a program compiled once for fixed input types (with the session's back end and
 * threads), run many times. Inputs are passed in the order of `inputs`. NULL on error. */
slc_kernel *slc_kernel_new(const slc_session *session, const char *expr, const slc_input_sig *inputs,
                           size_t n_inputs);
void slc_kernel_free(slc_kernel *kernel); /* NULL is ignored */
size_t slc_kernel_num_inputs(const slc_kernel *kernel);
int32_t slc_kernel_output_dtype(const slc_kernel *kernel); /* an slc_dtype; -1 for NULL */
size_t slc_kernel_output_rank(const slc_kernel *kernel);
/* output_rank dimensions, valid while the kernel lives. */
const int64_t *slc_kernel_output_shape(const slc_kernel *kernel);
/* The output's size in bytes (dense, C order). */
size_t slc_kernel_output_nbytes(const slc_kernel *kernel);
/* Runs the kernel on n_inputs tensors (each must match its signature exactly) into `out`,
 * which must hold exactly out_nbytes == slc_kernel_output_nbytes(kernel) bytes and overlap no
 * input. Index values are checked as NumPy does: a value out of range is SLC_ERR_RUNTIME. */
slc_status slc_kernel_run(const slc_kernel *kernel, const slc_tensor *inputs, size_t n_inputs, void *out,
                          size_t out_nbytes);

/* Runs a store kernel ("a[i] = v") on n_inputs tensors, updating the memory of its target input
 * (which must be dense and writable) as NumPy's x[i] = v does: in place, without a copy, where
 * the update reads no byte of the target; otherwise computed aside and copied over it. A bad
 * index is SLC_ERR_RUNTIME and leaves the target as it was, and so is a kernel without a
 * store. */
slc_status slc_kernel_store(const slc_kernel *kernel, const slc_tensor *inputs, size_t n_inputs);

/* Runs the kernel on arrays in CUDA device memory (device 0), asynchronously on `stream` (a
 * CUstream / cudaStream_t; 0 the default stream): each input's `data` is a device pointer
 * (strides in bytes, as for host tensors), `out` out_nbytes of device memory, dense, overlapping
 * no input. Returns when the launch is queued — or, for a program that can fail on an index
 * value, when the kernel ran, with SLC_ERR_RUNTIME and the CPU's message for a bad index. Any
 * kernel (whatever its session's back end); SLC_ERR_RUNTIME, code E0209, without a driver. */
slc_status slc_kernel_run_device(const slc_kernel *kernel, const slc_tensor *inputs, size_t n_inputs, void *out,
                                 size_t out_nbytes, void *stream);

/* Compiles `expr` once for inputs declared by name and type text whose dims may be names
 * ("f32[N, M]"; "?" for a name of its own; a name used twice is one size): a generic kernel,
 * for inputs of any shapes the types admit. NULL on error. slc_kernel_run takes any such
 * inputs; its output_shape is NULL and output_nbytes 0 (the output depends on the inputs: ask
 * slc_kernel_output_shape_for). Inputs that break what the program needs of their shapes are
 * SLC_ERR_RUNTIME, diagnostic code E0208. */
slc_kernel *slc_kernel_new_generic(const slc_session *session, const char *expr, const char *const *names,
                                   const char *const *types, size_t n_inputs);
/* The output's dims for these inputs (output_rank values into `dims`), for any kernel. */
slc_status slc_kernel_output_shape_for(const slc_kernel *kernel, const slc_tensor *inputs, size_t n_inputs,
                                       int64_t *dims);

/* Results of slc_session_eval. Pointers stay valid until slc_array_free. */
int32_t slc_array_dtype(const slc_array *array);
size_t slc_array_rank(const slc_array *array);
const int64_t *slc_array_shape(const slc_array *array);
const void *slc_array_data(const slc_array *array);
size_t slc_array_nbytes(const slc_array *array);
void slc_array_free(slc_array *array); /* NULL is ignored */

/* The calling thread's last error (see Conventions); NULL (status SLC_OK) when there is none. */
int32_t slc_last_error_status(void);
const char *slc_last_error_message(void);
const char *slc_last_error_code(void);
const char *slc_last_error_rendered(void);

/* Dtype helpers: the name ("f32") or NULL, and the element size or 0, of a code. */
const char *slc_dtype_name(int32_t dtype);
size_t slc_dtype_size(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* SLC_H */
