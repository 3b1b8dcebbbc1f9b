// The group's schedule template as one more sketch of the auto-scheduler, as TVM's MetaSchedule
// takes hand-written schedule rules beside its generated ones: the template's knobs (topi's
// ConfigSpace) are the numbers a program of this sketch completes, and its schedule is the
// template's for that config, replayed from the template's trace onto the task's computes. So the
// search's space holds the template tuner's, and the cost model ranks both kinds of program by the
// same loop-nest features (docs/auto-scheduler.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <random>

#include "te/schedule.h"
#include "topi/config_space.h"

namespace tessel::autotune {

class ScheduleTemplate {
 public:
  // The trace of the template's schedule for a config, on stages named by position (it replays
  // on ComputeDAG::schedule()).
  using Tracer = std::function<te::Trace(const topi::ConfigEntity&)>;
  ScheduleTemplate(topi::ConfigSpace space, Tracer tracer)
      : space_(std::move(space)), tracer_(std::move(tracer)) {}

  const topi::ConfigSpace& space() const { return space_; }
  // The trace for config `index`, made once per config (the cost model applies a program at
  // every generation of the search); safe to call from several threads.
  te::Trace trace(uint64_t index) const;

 private:
  topi::ConfigSpace space_;
  Tracer tracer_;
  mutable std::mutex mu_;
  mutable std::map<uint64_t, te::Trace> traces_;
};

// A random config of the space that its constraint accepts, other than the fallback (measured as
// the task's baseline already): half the time the fallback with one knob redrawn (the template's
// own choice, which its tuner's best configs often differ from in a knob or two), else any point.
// The fallback itself when no draw is accepted.
uint64_t sample_template_config(const ScheduleTemplate& t, std::mt19937_64& rng);

// `index` with one knob (of those with several values) set to another of its values, a config the
// constraint accepts other than the fallback; `index` itself when no such neighbour turns up in a
// few draws.
uint64_t mutate_template_config(const ScheduleTemplate& t, uint64_t index, std::mt19937_64& rng);

}  // namespace tessel::autotune
