// Submissions and runs (rig.txt, Running work: Submissions, Valid
// submissions, Submitting): what rig_submission_make checks and lays out
// once, and the runs that carry one submit's grids and parameters.
#pragma once

#include "buffer.hpp"
#include "image.hpp"

#include <memory>
#include <vector>

namespace rig {

// A ref of a launch part, as make checked it.
struct RefSpec {
  rig_ref_kind_t kind;
  rig_operand_t memory;
  int64_t at;
  bool writes;
  const rig_function_t *entry;  // RIG_REF_ENTRY
};

struct WordSpec {
  rig_operand_t memory;
  int64_t offset;
  uint64_t value;
};

struct PartSpec {
  rig_part_kind_t kind;
  uint32_t queue;
  int64_t block = -1;                  // launches and fills
  const rig_function_t *function = nullptr;
  std::vector<RefSpec> refs;
  int64_t params = 0;
  rig_operand_t src{}, dst{};          // a copy's sides; a fill's dst
  std::vector<WordSpec> words;
};

// A run's block: a launch's grid and parameters, or a fill's value.
struct BlockSpec {
  size_t part;
  size_t params_offset;  // in the run's parameter bytes
  uint8_t fill;          // the value a run starts with
};

struct LaunchGrid {
  uint64_t groups[3];
  uint64_t threads[3];
  uint64_t shared;
};

// A token of the calling thread, for the runs it holds.
const void *this_thread_token();

}  // namespace rig

struct rig_run : rig::HandleRecord<rig::HandleType::Run> {
  rig_submission *submission = nullptr;
  std::atomic<const void *> owner{nullptr};  // the thread holding it, or none
  std::atomic<bool> submitting{false};
  bool listed = false;                       // on the free list (runs_mu)
  std::vector<rig::LaunchGrid> grids;        // by block
  std::vector<uint8_t> fills;                // by block
  std::vector<unsigned char> params;         // the launches' parameter bytes
};

struct rig_submission : rig::HandleRecord<rig::HandleType::Submission> {
  std::atomic<int64_t> refs{1};
  rig_device_t *device = nullptr;
  std::vector<rig::PartSpec> parts;
  std::vector<rig::BlockSpec> blocks;
  size_t params_bytes = 0;
  uint32_t slots = 0;
  std::vector<rig_image_t *> images;   // held until the last work is done
  std::vector<rig_buffer_t *> fixed;   // likewise
  rig_release_fn keep = nullptr;
  void *keep_context = nullptr;
  std::atomic<uint64_t> last_value{0};  // of its last submit
  rig::Mutex runs_mu;
  std::vector<std::unique_ptr<rig_run>> runs;
  std::vector<rig_run *> free_runs;
};

namespace rig {

// True iff s is a handle not NULL and not released: the program holds a
// reference, though the record lasts until its last work is done.  A run
// lives as long as its submission.
inline bool live_handle(const rig_submission_t *s) {
  return handle_live(s, HandleType::Submission) && s->refs.load(std::memory_order_acquire) > 0;
}
inline bool live_handle(const rig_run_t *r) { return handle_live(r, HandleType::Run) && live_handle(r->submission); }

// Holds r for the calling thread (a run it has taken, or a free one) or
// returns false where another thread holds it.
bool hold_run(rig_run_t *r);
// Clears r to the state take gives and puts it back on its free list.
void free_run(rig_run_t *r);

}  // namespace rig
