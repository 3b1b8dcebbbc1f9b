/* The C ABI between generated code and the runtime. Generated kernels export
 *   int32_t NAME(const TesselValue* args, const int32_t* type_codes, int32_t num_args);
 * returning 0 on success, or -1 after TesselSetLastError(message). The runtime exports the
 * Tessel* functions below; the JIT resolves them in-process and shared libraries link them. */
#ifndef TESSEL_RUNTIME_C_RUNTIME_API_H_
#define TESSEL_RUNTIME_C_RUNTIME_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
} TesselValue;

typedef enum {
  kTesselArgInt = 0,      /* v_int64 */
  kTesselArgFloat = 2,    /* v_float64 */
  kTesselArgDLTensor = 7, /* v_handle is a DLTensor* */
} TesselArgTypeCode;

typedef int32_t (*TesselBackendFunc)(const TesselValue* args, const int32_t* type_codes,
                                     int32_t num_args);

/* Shared libraries call the Tessel* functions below through pointer variables named
 * TESSEL_RUNTIME_POINTER_PREFIX + function name, which the loader sets after dlopen. */
#define TESSEL_RUNTIME_POINTER_PREFIX "__tessel_fp_"

/* Shared libraries list their kernels in a constant table exported under this name, and a loader
 * calls only what the table lists: looking a kernel up by name with dlsym would also find any
 * function of libc ("abort", "exit"). Version 1: the layout below. */
#define TESSEL_KERNEL_TABLE_SYMBOL "__tessel_kernel_table"
#define TESSEL_KERNEL_TABLE_VERSION 1

typedef struct {
  const char* name; /* NUL-terminated */
  TesselBackendFunc func;
} TesselKernelEntry;

typedef struct {
  uint32_t version; /* TESSEL_KERNEL_TABLE_VERSION */
  uint32_t num_kernels;
  const TesselKernelEntry* kernels;
} TesselKernelTable;

/* Error reporting from generated code: a thread-local message. */
void TesselSetLastError(const char* msg);
const char* TesselGetLastError(void);

/* Runs lambda(task_id, num_tasks, closure) for task_id in [0, num_tasks) on the thread pool and
 * waits. num_tasks == 0 means one task per pool thread. Returns the first nonzero lambda result. */
typedef int32_t (*TesselParallelLambda)(int32_t task_id, int32_t num_tasks, void* closure);
int32_t TesselBackendParallelLaunch(TesselParallelLambda lambda, void* closure, int32_t num_tasks);
/* Number of tasks a num_tasks == 0 launch uses (the pool size). */
int32_t TesselBackendNumThreads(void);

/* Scratch memory for large allocations in kernels; 64-byte aligned. A thread keeps the blocks it
   frees (a few, by size) for its next allocations, which kernels repeat on every run. */
void* TesselBackendAllocWorkspace(uint64_t nbytes);
void TesselBackendFreeWorkspace(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* TESSEL_RUNTIME_C_RUNTIME_API_H_ */
