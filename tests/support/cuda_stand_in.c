/* A stand-in for the CUDA driver (libcuda) and NVRTC, for tests on machines without a GPU: the
 * entry points slc's CUDA runtime calls, with host memory as device memory and kernels run as
 * the host emulation runs them (src/backend/cuda/host_emulation.h). "NVRTC" compiles a program
 * with the system C compiler into a shared object, whose bytes are the "CUBIN"; loading a module
 * loads that object. So every device route of slc — uploads, launches, stores through views,
 * the error words, the Python and C surfaces — runs end to end against the interpreter.
 *
 * Where it is stricter than a GPU would be, it is so on purpose, to make mistakes visible:
 *   - Queued work (copies, fills, launches, stream-ordered frees, event records) runs only
 *     when something waits for it (a stream's or an event's synchronization, a synchronous copy
 *     or free, a module unload), and then only what that wait covers: a stream's own work, what
 *     it was made to wait for (cuStreamWaitEvent), and the legacy default stream's ordering
 *     with the blocking streams (not with CU_STREAM_NON_BLOCKING ones). So a result read before its copy was waited for is not there yet, nor is
 *     another stream's work that nothing ordered before it. A copy from pageable host memory
 *     takes the bytes when it is queued, and one to pageable host memory runs at once, as CUDA
 *     documents.
 *   - Fresh device memory is filled with 0xA5, not zeros.
 *   - Every copy and fill must lie inside one live allocation (device or mapped host memory),
 *     else CUDA_ERROR_INVALID_VALUE; SLC_STAND_IN_FOREIGN=1 lets other addresses stand for a
 *     foreign library's device memory (host memory, in a test).
 *   - Launches are one-dimensional, at most 1024 threads a block, with one parameter (the
 *     argument block of slc's kernels).
 *   - An event's elapsed time before the event completed is CUDA_ERROR_NOT_READY.
 * Built by tests/support/cuda_stand_in.rs with -DSLC_EMULATION_HEADER="<path of the header>". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int CUresult;
enum {
  SUCCESS = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  INVALID_IMAGE = 200,
  INVALID_HANDLE = 400,
  NOT_FOUND = 500,
  NOT_READY = 600,
};
typedef unsigned long long CUdeviceptr;
typedef void (*emulate_fn)(const unsigned long long*, unsigned int, unsigned int);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

/* ---- memory ---------------------------------------------------------------------------- */

struct allocation {
  char* base;
  size_t bytes;
  int host; /* cuMemHostAlloc: pinned, mapped */
  struct allocation* next;
};
static struct allocation* allocations;

static struct allocation* find(const void* p) {
  for (struct allocation* a = allocations; a; a = a->next)
    if ((const char*)p >= a->base && (const char*)p < a->base + (a->bytes ? a->bytes : 1)) return a;
  return NULL;
}

/* Whether [p, p + n) is memory a queued operation may touch. */
static int valid(CUdeviceptr p, size_t n) {
  if (n == 0) return 1;
  struct allocation* a = find((const void*)(uintptr_t)p);
  if (a) return (const char*)(uintptr_t)p + n <= a->base + a->bytes;
  const char* foreign = getenv("SLC_STAND_IN_FOREIGN");
  return foreign && foreign[0] == '1';
}

static int pinned(const void* p) {
  struct allocation* a = find(p);
  return a && a->host;
}

static CUresult allocate(void** out, size_t bytes, int host) {
  struct allocation* a = calloc(1, sizeof *a);
  size_t rounded = (bytes + 255) / 256 * 256;
  char* base = aligned_alloc(256, rounded ? rounded : 256);
  if (!a || !base) {
    free(a);
    free(base);
    return OUT_OF_MEMORY;
  }
  memset(base, 0xA5, rounded ? rounded : 256);
  a->base = base;
  a->bytes = bytes;
  a->host = host;
  a->next = allocations;
  allocations = a;
  *out = base;
  return SUCCESS;
}

static CUresult release(void* p, int host) {
  for (struct allocation** at = &allocations; *at; at = &(*at)->next) {
    if ((*at)->base == p && (*at)->host == host) {
      struct allocation* a = *at;
      *at = a->next;
      free(a->base);
      free(a);
      return SUCCESS;
    }
  }
  return INVALID_VALUE;
}

/* ---- the queue ------------------------------------------------------------------------- */

/* Work queued on a stream runs after the work queued on it before, after the work a
 * cuStreamWaitEvent made it wait for, and — for the legacy default stream (NULL, 1, 2 per
 * thread counted as it), which synchronizes with the blocking streams — after all work queued
 * before it on any blocking stream, as all work queued after it on one does. A stream made
 * with CU_STREAM_NON_BLOCKING is ordered with no other, as on a GPU. Nothing runs until something waits for it:
 * a stream's synchronization runs that stream's work and what it depends on, no more. */
struct event {
  int recorded;
  void* stream; /* of the latest record */
  uint64_t seq; /* the latest record's place in the queue */
  int reached;
  struct timespec at;
};

struct function {
  emulate_fn run;
  size_t args_bytes;
};

enum kind { COPY, FILL, LAUNCH, FREE, EVENT, WAIT };
struct op {
  enum kind kind;
  void* stream;
  uint64_t seq;
  void* to;
  const void* from;
  size_t bytes;
  unsigned char value;
  void* owned; /* freed after the op: a launch's argument block, a pageable source's bytes */
  struct function* function;
  unsigned int grid, block;
  struct event* event; /* EVENT: the event recorded */
  void* after_stream;  /* WAIT: the work it waits for, on that stream up to that place */
  uint64_t after_seq;
  int done;
  struct op* next;
};
static struct op *head, *tail;
static uint64_t queued;

static int legacy(void* stream) { return (uintptr_t)stream <= 2; }

/* A stream made with CU_STREAM_NON_BLOCKING: its handle's byte says so (handles are kept). */
#define NON_BLOCKING 0x1u
static int non_blocking(void* stream) { return !legacy(stream) && (*(unsigned char*)stream & NON_BLOCKING); }

/* Whether work on `a` and on `b` is ordered by the queue: the same stream, or the legacy
 * stream and a stream that synchronizes with it (a non-blocking one does not). */
static int ordered(void* a, void* b) {
  return a == b || (legacy(a) && !non_blocking(b)) || (legacy(b) && !non_blocking(a));
}

static CUresult enqueue(struct op o, void* stream) {
  struct op* p = malloc(sizeof *p);
  if (!p) return OUT_OF_MEMORY;
  *p = o;
  p->stream = legacy(stream) ? NULL : stream;
  p->seq = ++queued;
  p->done = 0;
  p->next = NULL;
  if (tail) tail->next = p; else head = p;
  tail = p;
  return SUCCESS;
}

static void run_upto(void* stream, uint64_t seq);

/* Runs `o` once what it follows has run. */
static void run(struct op* o) {
  if (o->done) return;
  o->done = 1; /* before its predecessors: they never depend on it */
  for (struct op* p = head; p && p != o; p = p->next)
    if (!p->done && ordered(p->stream, o->stream)) run(p);
  switch (o->kind) {
    case COPY: memmove(o->to, o->from, o->bytes); break;
    case FILL: memset(o->to, o->value, o->bytes); break;
    case LAUNCH: o->function->run(o->owned, o->grid, o->block); break;
    case FREE: release(o->to, 0); break;
    case EVENT:
      if (o->event->seq == o->seq) { /* not recorded again since */
        clock_gettime(CLOCK_MONOTONIC, &o->event->at);
        o->event->reached = 1;
      }
      break;
    case WAIT: run_upto(o->after_stream, o->after_seq); break;
  }
  free(o->owned);
  o->owned = NULL;
}

/* Runs the work queued on `stream` up to place `seq`, and what it follows. */
static void run_upto(void* stream, uint64_t seq) {
  for (struct op* p = head; p && p->seq <= seq; p = p->next)
    if (p->stream == stream) run(p);
}

/* Forgets the work that has run. */
static void sweep(void) {
  struct op** at = &head;
  tail = NULL;
  while (*at) {
    if ((*at)->done) {
      struct op* o = *at;
      *at = o->next;
      free(o);
    } else {
      tail = *at;
      at = &(*at)->next;
    }
  }
}

/* Runs every queued operation. */
static void drain(void) {
  for (struct op* p = head; p; p = p->next) run(p);
  sweep();
}

/* Runs the work queued on `stream` so far. */
static void synchronize(void* stream) {
  run_upto(legacy(stream) ? NULL : stream, queued);
  sweep();
}

#define ENTER                           \
  pthread_mutex_lock(&lock);            \
  CUresult slc_r = SUCCESS;             \
  if (!initialized) {                   \
    slc_r = NOT_INITIALIZED;            \
    goto done;                          \
  }
#define LEAVE           \
  done:                 \
  pthread_mutex_unlock(&lock); \
  return slc_r;
#define FAIL(code) do { slc_r = (code); goto done; } while (0)

/* Bytes of device and mapped host memory allocated and not yet freed, once the queued frees
 * have run: for tests that look for leaks. Not a driver entry point. */
size_t slc_stand_in_live_bytes(void) {
  pthread_mutex_lock(&lock);
  drain();
  size_t bytes = 0;
  for (struct allocation* a = allocations; a; a = a->next) bytes += a->bytes;
  pthread_mutex_unlock(&lock);
  return bytes;
}

/* ---- the driver ------------------------------------------------------------------------ */

CUresult cuInit(unsigned int flags) {
  pthread_mutex_lock(&lock);
  initialized = flags == 0;
  pthread_mutex_unlock(&lock);
  return flags == 0 ? SUCCESS : INVALID_VALUE;
}
CUresult cuDriverGetVersion(int* v) { *v = 13000; return SUCCESS; }
CUresult cuDeviceGetCount(int* n) { ENTER *n = 1; LEAVE }
CUresult cuDeviceGet(int* d, int ordinal) { ENTER if (ordinal != 0) FAIL(INVALID_VALUE); *d = 0; LEAVE }
CUresult cuDeviceGetName(char* name, int len, int dev) {
  ENTER
  if (dev != 0 || len <= 0) FAIL(INVALID_VALUE);
  snprintf(name, (size_t)len, "slc's stand-in CUDA device (host memory)");
  LEAVE
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int dev) {
  ENTER
  if (dev != 0) FAIL(INVALID_VALUE);
  switch (attribute) {
    case 75: *value = 9; break;    /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = 0; break;    /* COMPUTE_CAPABILITY_MINOR */
    case 1: *value = 1024; break;  /* MAX_THREADS_PER_BLOCK */
    case 16: *value = 132; break;  /* MULTIPROCESSOR_COUNT */
    default: FAIL(INVALID_VALUE);
  }
  LEAVE
}
static int primary_context;
CUresult cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  ENTER if (dev != 0) FAIL(INVALID_VALUE); *ctx = &primary_context; LEAVE
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { ENTER if (dev != 0) FAIL(INVALID_VALUE); LEAVE }
static __thread void* current;
CUresult cuCtxSetCurrent(void* ctx) {
  ENTER if (ctx && ctx != &primary_context) FAIL(INVALID_HANDLE); current = ctx; LEAVE
}
CUresult cuCtxGetCurrent(void** ctx) { ENTER *ctx = current; LEAVE }
CUresult cuCtxSynchronize(void) { ENTER drain(); LEAVE }

static int pool;
CUresult cuDeviceGetDefaultMemPool(void** p, int dev) { ENTER if (dev != 0) FAIL(INVALID_VALUE); *p = &pool; LEAVE }
CUresult cuMemPoolSetAttribute(void* p, int attribute, void* value) {
  ENTER (void)attribute; (void)value; if (p != &pool) FAIL(INVALID_HANDLE); LEAVE
}

CUresult cuMemAlloc_v2(CUdeviceptr* d, size_t bytes) {
  ENTER
  void* p;
  if (bytes == 0) FAIL(INVALID_VALUE);
  slc_r = allocate(&p, bytes, 0);
  if (slc_r == SUCCESS) *d = (CUdeviceptr)(uintptr_t)p;
  LEAVE
}
CUresult cuMemAllocAsync(CUdeviceptr* d, size_t bytes, void* stream) {
  (void)stream;
  return cuMemAlloc_v2(d, bytes);
}
CUresult cuMemFree_v2(CUdeviceptr d) { ENTER drain(); slc_r = release((void*)(uintptr_t)d, 0); LEAVE }
CUresult cuMemFreeAsync(CUdeviceptr d, void* stream) {
  ENTER
  struct allocation* a = find((void*)(uintptr_t)d);
  if (!a || a->host || a->base != (char*)(uintptr_t)d) FAIL(INVALID_VALUE);
  slc_r = enqueue((struct op){.kind = FREE, .to = a->base}, stream);
  LEAVE
}
CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned int flags) {
  ENTER (void)flags; slc_r = allocate(p, bytes ? bytes : 1, 1); LEAVE
}
CUresult cuMemFreeHost(void* p) { ENTER drain(); slc_r = release(p, 1); LEAVE }
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* d, void* p, unsigned int flags) {
  ENTER
  if (flags != 0 || !pinned(p)) FAIL(INVALID_VALUE);
  *d = (CUdeviceptr)(uintptr_t)p;
  LEAVE
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void* from, size_t bytes, void* stream) {
  ENTER
  if (!valid(to, bytes)) FAIL(INVALID_VALUE);
  struct op o = {.kind = COPY, .to = (void*)(uintptr_t)to, .from = from, .bytes = bytes};
  if (!pinned(from)) { /* pageable: staged now, so the caller may reuse its buffer */
    o.owned = malloc(bytes ? bytes : 1);
    if (!o.owned) FAIL(OUT_OF_MEMORY);
    memcpy(o.owned, from, bytes);
    o.from = o.owned;
  }
  slc_r = enqueue(o, stream);
  LEAVE
}
CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes, void* stream) {
  ENTER
  if (!valid(from, bytes)) FAIL(INVALID_VALUE);
  slc_r = enqueue((struct op){.kind = COPY, .to = to, .from = (void*)(uintptr_t)from, .bytes = bytes}, stream);
  if (slc_r == SUCCESS && !pinned(to)) { /* to pageable memory: returns once copied */
    run(tail);
    sweep();
  }
  LEAVE
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes, void* stream) {
  ENTER
  if (!valid(to, bytes) || !valid(from, bytes)) FAIL(INVALID_VALUE);
  slc_r = enqueue((struct op){.kind = COPY, .to = (void*)(uintptr_t)to, .from = (void*)(uintptr_t)from, .bytes = bytes}, stream);
  LEAVE
}
CUresult cuMemcpyDtoH_v2(void* to, CUdeviceptr from, size_t bytes) {
  ENTER
  if (!valid(from, bytes)) FAIL(INVALID_VALUE);
  drain();
  memmove(to, (void*)(uintptr_t)from, bytes);
  LEAVE
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr to, const void* from, size_t bytes) {
  ENTER
  if (!valid(to, bytes)) FAIL(INVALID_VALUE);
  drain();
  memmove((void*)(uintptr_t)to, from, bytes);
  LEAVE
}
CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t n, void* stream) {
  ENTER
  if (!valid(to, n)) FAIL(INVALID_VALUE);
  slc_r = enqueue((struct op){.kind = FILL, .to = (void*)(uintptr_t)to, .value = value, .bytes = n}, stream);
  LEAVE
}

CUresult cuStreamCreate(void** stream, unsigned int flags) {
  ENTER
  if (flags & ~NON_BLOCKING) FAIL(INVALID_VALUE);
  *stream = malloc(1); /* a handle of its own, never 0, 1 or 2 */
  if (!*stream) FAIL(OUT_OF_MEMORY);
  *(unsigned char*)*stream = (unsigned char)flags;
  LEAVE
}
/* Its queued work still runs in order; the handle is kept (a few bytes). */
CUresult cuStreamDestroy_v2(void* stream) { ENTER if (legacy(stream)) FAIL(INVALID_HANDLE); LEAVE }
CUresult cuStreamSynchronize(void* stream) { ENTER synchronize(stream); LEAVE }
CUresult cuStreamWaitEvent(void* stream, struct event* e, unsigned int flags) {
  ENTER
  if (!e || flags != 0) FAIL(INVALID_VALUE);
  if (e->recorded)
    slc_r = enqueue((struct op){.kind = WAIT, .after_stream = e->stream, .after_seq = e->seq}, stream);
  LEAVE
}
CUresult cuEventCreate(struct event** e, unsigned int flags) {
  ENTER
  (void)flags;
  *e = calloc(1, sizeof **e);
  if (!*e) FAIL(OUT_OF_MEMORY);
  LEAVE
}
CUresult cuEventRecord(struct event* e, void* stream) {
  ENTER
  if (!e) FAIL(INVALID_HANDLE);
  slc_r = enqueue((struct op){.kind = EVENT, .event = e}, stream);
  if (slc_r == SUCCESS) {
    e->recorded = 1;
    e->stream = tail->stream;
    e->seq = tail->seq;
    e->reached = 0;
  }
  LEAVE
}
CUresult cuEventSynchronize(struct event* e) {
  ENTER
  if (!e) FAIL(INVALID_HANDLE);
  if (e->recorded) {
    run_upto(e->stream, e->seq);
    sweep();
  }
  LEAVE
}
CUresult cuEventQuery(struct event* e) { ENTER if (!e) FAIL(INVALID_HANDLE); if (!e->reached) FAIL(NOT_READY); LEAVE }
CUresult cuEventElapsedTime_v2(float* ms, struct event* a, struct event* b) {
  ENTER
  if (!a || !b) FAIL(INVALID_HANDLE);
  if (!a->reached || !b->reached) FAIL(NOT_READY);
  *ms = (float)((b->at.tv_sec - a->at.tv_sec) * 1e3 + (b->at.tv_nsec - a->at.tv_nsec) / 1e6);
  LEAVE
}
/* An event may still be in the queue: it is kept (a few bytes per event). */
CUresult cuEventDestroy_v2(struct event* e) { ENTER if (!e) FAIL(INVALID_HANDLE); LEAVE }

/* ---- modules ----------------------------------------------------------------------------- */

static const char MAGIC[8] = "SLCSTND1";
struct image { char magic[8]; uint64_t bytes; }; /* followed by the shared object */

CUresult cuModuleLoadData(void** module, const void* data) {
  ENTER
  const struct image* image = data;
  if (!image || memcmp(image->magic, MAGIC, 8) != 0) FAIL(INVALID_IMAGE);
  char path[] = "/tmp/slc-stand-in-module-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) FAIL(OUT_OF_MEMORY);
  const char* bytes = (const char*)(image + 1);
  size_t done = 0;
  while (done < image->bytes) {
    ssize_t n = write(fd, bytes + done, image->bytes - done);
    if (n <= 0) break;
    done += (size_t)n;
  }
  close(fd);
  void* handle = done == image->bytes ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
  unlink(path);
  if (!handle) FAIL(INVALID_IMAGE);
  *module = handle;
  LEAVE
}
CUresult cuModuleUnload(void* module) { ENTER drain(); if (dlclose(module) != 0) FAIL(INVALID_HANDLE); LEAVE }
CUresult cuModuleGetFunction(struct function** f, void* module, const char* name) {
  ENTER
  char symbol[512];
  snprintf(symbol, sizeof symbol, "%s_emulate", name);
  emulate_fn run = (emulate_fn)dlsym(module, symbol);
  snprintf(symbol, sizeof symbol, "%s_args_bytes", name);
  const unsigned long* bytes = dlsym(module, symbol);
  if (!run || !bytes) FAIL(NOT_FOUND);
  *f = malloc(sizeof **f);
  if (!*f) FAIL(OUT_OF_MEMORY);
  (*f)->run = run;
  (*f)->args_bytes = *bytes;
  LEAVE
}
CUresult cuLaunchKernel(struct function* f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        void* stream, void** params, void** extra) {
  ENTER
  if (!f) FAIL(INVALID_HANDLE);
  if (gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || shared != 0 ||
      !params || !params[0] || extra)
    FAIL(INVALID_VALUE);
  void* args = malloc(f->args_bytes ? f->args_bytes : 1);
  if (!args) FAIL(OUT_OF_MEMORY);
  memcpy(args, params[0], f->args_bytes); /* the driver takes the block at the launch */
  slc_r = enqueue((struct op){.kind = LAUNCH, .function = f, .owned = args, .grid = gx, .block = bx}, stream);
  LEAVE
}

static const char* names[][2] = {
    {"CUDA_SUCCESS", "no error"},
    {"CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {"CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
};
static const char* describe(CUresult r, int which) {
  if (r >= 0 && r < 4) return names[r][which];
  switch (r) {
    case INVALID_IMAGE: return which ? "device kernel image is invalid" : "CUDA_ERROR_INVALID_IMAGE";
    case INVALID_HANDLE: return which ? "invalid resource handle" : "CUDA_ERROR_INVALID_HANDLE";
    case NOT_FOUND: return which ? "named symbol not found" : "CUDA_ERROR_NOT_FOUND";
    case NOT_READY: return which ? "device not ready" : "CUDA_ERROR_NOT_READY";
    default: return which ? "unknown error" : "CUDA_ERROR_UNKNOWN";
  }
}
CUresult cuGetErrorName(CUresult r, const char** s) { *s = describe(r, 0); return SUCCESS; }
CUresult cuGetErrorString(CUresult r, const char** s) { *s = describe(r, 1); return SUCCESS; }

/* ---- NVRTC ------------------------------------------------------------------------------- */

struct program {
  char* source;
  char* log;
  struct image* image;
};

int nvrtcVersion(int* major, int* minor) {
  /* Not NVRTC's: slc's cache keys then never meet a real CUBIN's. */
  *major = 0;
  *minor = 1;
  return 0;
}
int nvrtcCreateProgram(struct program** p, const char* source, const char* name, int headers,
                       const char* const* contents, const char* const* names_) {
  (void)name; (void)contents; (void)names_;
  if (!p || !source || headers != 0) return 4; /* NVRTC_ERROR_INVALID_INPUT */
  *p = calloc(1, sizeof **p);
  if (!*p || !((*p)->source = strdup(source))) return 1; /* NVRTC_ERROR_OUT_OF_MEMORY */
  return 0;
}

static char* slurp(const char* path, size_t* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* bytes = malloc((size_t)size + 1);
  if (bytes && fread(bytes, 1, (size_t)size, f) != (size_t)size) { free(bytes); bytes = NULL; }
  fclose(f);
  if (bytes) { bytes[size] = 0; *n = (size_t)size; }
  return bytes;
}

/* The program under the emulation header, with an emulated launcher and its argument block's
 * size for every kernel (`SLC_EXTERN __global__ void NAME(TYPE a)`), compiled by `$CC` (else
 * `cc`) into a shared object: the image. */
int nvrtcCompileProgram(struct program* p, int n, const char* const* options) {
  (void)n; (void)options;
  char dir[] = "/tmp/slc-stand-in-nvrtc-XXXXXX";
  if (!mkdtemp(dir)) return 1;
  char c[96], so[96], err[96], command[512];
  snprintf(c, sizeof c, "%s/k.c", dir);
  snprintf(so, sizeof so, "%s/k.so", dir);
  snprintf(err, sizeof err, "%s/log", dir);
  FILE* f = fopen(c, "w");
  if (!f) return 1;
  fprintf(f, "#include \"%s\"\n%s\n", SLC_EMULATION_HEADER, p->source);
  for (const char* at = p->source; (at = strstr(at, "__global__ void ")); ) {
    at += strlen("__global__ void ");
    const char* open = strchr(at, '(');
    const char* space = open ? strchr(open, ' ') : NULL;
    if (!open || !space) break;
    fprintf(f, "SLC_EMULATE(%.*s, %.*s)\n", (int)(open - at), at, (int)(space - open - 1), open + 1);
    fprintf(f, "SLC_EMULATE_LINKAGE const unsigned long %.*s_args_bytes = sizeof(%.*s);\n",
            (int)(open - at), at, (int)(space - open - 1), open + 1);
  }
  fclose(f);
  const char* cc = getenv("CC");
  snprintf(command, sizeof command, "%s -std=c99 -O0 -w -shared -fPIC -o %s %s 2> %s",
           cc && *cc ? cc : "cc", so, c, err);
  int status = system(command);
  size_t bytes = 0;
  char* object = status == 0 ? slurp(so, &bytes) : NULL;
  if (object) {
    p->image = malloc(sizeof(struct image) + bytes);
    if (p->image) {
      memcpy(p->image->magic, MAGIC, 8);
      p->image->bytes = bytes;
      memcpy(p->image + 1, object, bytes);
    }
    free(object);
  } else {
    p->log = slurp(err, &bytes);
  }
  unlink(c);
  unlink(so);
  unlink(err);
  rmdir(dir);
  return p->image ? 0 : 6; /* NVRTC_ERROR_COMPILATION */
}
int nvrtcGetProgramLogSize(struct program* p, size_t* n) { *n = p->log ? strlen(p->log) + 1 : 1; return 0; }
int nvrtcGetProgramLog(struct program* p, char* log) { strcpy(log, p->log ? p->log : ""); return 0; }
int nvrtcGetCUBINSize(struct program* p, size_t* n) {
  if (!p->image) return 4;
  *n = sizeof(struct image) + p->image->bytes;
  return 0;
}
int nvrtcGetCUBIN(struct program* p, char* out) {
  if (!p->image) return 4;
  memcpy(out, p->image, sizeof(struct image) + p->image->bytes);
  return 0;
}
int nvrtcDestroyProgram(struct program** p) {
  free((*p)->source);
  free((*p)->log);
  free((*p)->image);
  free(*p);
  *p = NULL;
  return 0;
}
