// A hand-over's payload, copied out of the client's arena and checked, and
// its parts run on the served device through rig's C API.
#pragma once

#include "client_images.hpp"
#include "client_objects.hpp"
#include "protocol.h"
#include "ring.hpp"
#include "shared_rows.hpp"

#include <rig/rig.h>

#include <string>
#include <vector>

namespace rigd {

// A hand-over as rigd copied it out.  A Requests keeps one and reads each
// hand-over into it, so that a warm hand-over allocates nothing.
struct Handover {
  std::vector<rig_proxy_wait> waits;
  std::vector<rig_proxy_part> parts;
};

// Copies the hand-over at [offset, offset + bytes) of the payload arena into
// h, each byte read once, and answers true; false if it leaves the arena or
// its counts do not match its size exactly.
bool read_handover(const rig::proxy::PayloadArena &payload, uint64_t offset, uint64_t bytes, Handover &h);

// The hand-over a FILL entry carries (protocol.h) into h, and true; false
// where the entry names a payload.  hold_parts checks its part.
bool read_entry_fill(const rig_proxy_entry &entry, Handover &h);

// A part with views of the bytes it spans on each side, each a reference
// of its own: what the part reads (NULL for a fill, words and a launch)
// and what it writes (NULL for a words part's WORDS and a launch; a
// write's whole buffer).  A launch's part is its LAUNCH slot, launch its
// index in HeldParts::launches().
struct HeldPart {
  rig_proxy_part part;
  rig_buffer_t *src;
  rig_buffer_t *dst;
  size_t launch = 0;
};

// A launch as rigd runs it: rigd's submission of its function and layout
// of refs (a reference of its own), the views of the bytes its memory refs
// name (HeldParts::buffers(), from first_buffer), and its parameters
// (HeldParts::params(), from first_param).
struct HeldLaunch {
  rig_proxy_launch launch;
  rig_submission_t *submission;
  size_t first_buffer, buffers;
  size_t first_param;
};

// What a hand-over's launches need: the client's images, and the instance
// of the proxy that runs them (a function must be of it).
struct LaunchContext {
  ClientImages &images;
  const Instance *instance;
};

// The buffers of a hand-over's parts, released by clear and with it.
class HeldParts {
 public:
  HeldParts() = default;
  ~HeldParts() { clear(); }
  HeldParts(const HeldParts &) = delete;
  HeldParts &operator=(const HeldParts &) = delete;

  void add(const HeldPart &p) { parts_.push_back(p); }
  void add_launch(const HeldLaunch &l) { launches_.push_back(l); }
  void add_buffer(rig_buffer_t *b) { buffers_.push_back(b); }
  // Adds a row of the shared-buffer table a part names, once.
  void add_row(std::shared_ptr<SharedRow> row);
  const std::vector<std::shared_ptr<SharedRow>> &rows() const noexcept { return rows_; }
  void clear() noexcept;
  const std::vector<HeldPart> &parts() const noexcept { return parts_; }
  const std::vector<HeldLaunch> &launches() const noexcept { return launches_; }
  const std::vector<rig_buffer_t *> &buffers() const noexcept { return buffers_; }
  std::vector<std::byte> &params() noexcept { return params_; }
  const std::vector<std::byte> &params() const noexcept { return params_; }
  // A launch's scratch: the layout of its refs.
  std::vector<ClientImages::RefLayout> &layout() noexcept { return layout_; }

 private:
  std::vector<HeldPart> parts_;
  std::vector<HeldLaunch> launches_;
  std::vector<rig_buffer_t *> buffers_;
  std::vector<std::byte> params_;
  std::vector<ClientImages::RefLayout> layout_;
  std::vector<std::shared_ptr<SharedRow>> rows_;
};

// Views of the bytes each part spans, into held, and for a words part's
// writes (only where words is true: a proxy of the machine's host) their
// buffers; false if a part is of no known kind, names a handle objects
// does not hold, reaches bytes outside its buffer (its rows overflow or
// pass the buffer's end), is a copy whose sides share a byte (one memory
// behind two handles, a borrow of the other side), or is a words part
// whose writes do not follow it, each 8 bytes on a multiple of 8 of its
// buffer, or a launch (only where launches is not NULL) that is not as
// protocol.h's rig_proxy_launch states: its function not the client's on
// launches' instance, an axis zero, more than 2^62 threads or a group of
// more than the function's max threads, parameters past
// RIG_PROXY_MAX_PARAM_BYTES or its slots, a ref not 8 bytes inside them,
// of no known kind, naming a handle objects does not hold, bytes outside
// its buffer or a function of no address, or a launch rig does not make.
// A hand-over that holds is one rig takes as it is.  Where it does not,
// why (if not NULL) gets what was wrong: the part's index and numbers.
bool hold_parts(const ClientObjects &objects, const std::vector<rig_proxy_part> &parts, bool words,
                LaunchContext *launches, HeldParts &held, std::string *why = nullptr);

// Submits each held part, in order, after waits, its point appended to
// points: copies, fills and launches as rig places them (a launch through
// rigd's submission, ordered by its memory's stamps), words parts on device,
// each after every earlier part and before every later one (rig's order
// of a words part).  Stops at the first that fails and answers its status.
rig_status_t submit_parts(const HeldParts &held, rig_device_t *device, const std::vector<rig_point_t> &waits,
                          std::vector<rig_point_t> &points);

}  // namespace rigd
