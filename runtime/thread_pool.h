// The thread pool that runs parallel loops. Size: TESSEL_NUM_THREADS if set, else the number of
// cores; set_num_threads() overrides both. Workers are created on first use, spin briefly after a
// launch and then sleep. Launches from several user threads are serialized by a mutex; a launch
// from inside a task runs all its tasks serially in the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "runtime/c_runtime_api.h"

namespace tessel::runtime {

// n <= 0 restores the default (TESSEL_NUM_THREADS is read again). Throws tessel::Error when called
// from inside a task.
void set_num_threads(int n);
// Throws tessel::Error if TESSEL_NUM_THREADS is set but invalid.
int num_threads();

// Runs fn(task_id, num_tasks) for each task on the pool and waits: each participating thread runs
// its contiguous share of the task ids in order (the caller's begins with task 0), then takes the
// tasks left in the others' shares. Returns the first nonzero result. Nested calls from a pool
// thread run serially.
// num_tasks == 0 means one task per pool thread; an exception from fn is rethrown here.
int32_t parallel_for(int32_t num_tasks, const std::function<int32_t(int32_t, int32_t)>& fn);

// The allocation-free form behind TesselBackendParallelLaunch. Every task runs exactly once; the
// result is that of the lowest failing task id, whose TesselGetLastError message is moved to the
// calling thread.
int32_t parallel_launch(TesselParallelLambda fn, void* closure, int32_t num_tasks);

namespace detail {
// Parses a TESSEL_NUM_THREADS value: an integer in [1, 1024], else nullopt.
std::optional<int> parse_num_threads(const char* text);
}  // namespace detail

}  // namespace tessel::runtime
