// A hand-over's payload and its parts (handover.hpp).
#include "handover.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace rigd {

namespace {

// Whether rows rows of width bytes, pitch apart, from offset lie inside
// size bytes, with no overflow on the way.
bool rows_fit(uint64_t offset, uint64_t width, uint64_t rows, uint64_t pitch, uint64_t size) {
  if (width == 0 || rows == 0 || offset > size) return false;
  if (rows > 1 && pitch < width) return false;
  uint64_t room = size - offset;
  if (width > room) return false;
  // The last row starts (rows - 1) * pitch after the first.
  return rows == 1 || (pitch <= (room - width) / (rows - 1));
}

// Every field a part's kind does not use is zero, and its sides fit.
bool part_fits(const rig_proxy_part &p, rig_buffer_t *src, rig_buffer_t *dst) {
  auto size = [](rig_buffer_t *b) { return static_cast<uint64_t>(rig_buffer_bytes(b)); };
  if (p.width > INT64_MAX || p.rows > INT64_MAX || p.src_pitch > INT64_MAX || p.dst_pitch > INT64_MAX)
    return false;
  if (p.kind == RIG_PROXY_PART_FILL)
    return p.value <= UINT8_MAX && p.src == 0 && p.src_offset == 0 && p.src_pitch == 0 &&
           p.dst_pitch == p.width && p.rows != 0 && p.width <= INT64_MAX / p.rows &&
           rows_fit(p.dst_offset, p.width * p.rows, 1, 0, size(dst));
  return p.value == 0 && rows_fit(p.src_offset, p.width, p.rows, p.src_pitch, size(src)) &&
         rows_fit(p.dst_offset, p.width, p.rows, p.dst_pitch, size(dst));
}

// A view of the bytes rows rows of width bytes, pitch apart, span from
// offset (part_fits checked them), or NULL where rig refuses it.  Takes
// the caller's reference of b: answers it where they are all of b, else
// lets go of it.
rig_buffer_t *extent_view(rig_buffer_t *b, uint64_t offset, uint64_t width, uint64_t rows, uint64_t pitch) {
  uint64_t extent = (rows - 1) * pitch + width;
  if (offset == 0 && extent == static_cast<uint64_t>(rig_buffer_bytes(b))) return b;
  rig_buffer_t *view = nullptr;
  rig_buffer_view(b, static_cast<int64_t>(offset), static_cast<int64_t>(extent), &view);
  rig_buffer_unref(b);
  return view;
}

// The views a part that fits spans, taking the caller's references of its
// sides: for a copy, both sides' (the box then starts at each view's byte
// 0); for a fill, its bytes.
HeldPart spanned(const rig_proxy_part &p, rig_buffer_t *src, rig_buffer_t *dst) {
  if (p.kind == RIG_PROXY_PART_FILL) return {p, nullptr, extent_view(dst, p.dst_offset, p.width * p.rows, 1, 0)};
  return {p, extent_view(src, p.src_offset, p.width, p.rows, p.src_pitch),
          extent_view(dst, p.dst_offset, p.width, p.rows, p.dst_pitch)};
}

}  // namespace

bool read_handover(const rig::proxy::PayloadArena &payload, uint64_t offset, uint64_t bytes, Handover &h) {
  rig_proxy_handover header;
  if (bytes < sizeof header || !payload.holds(offset, bytes)) return false;
  payload.copy_out(offset, std::as_writable_bytes(std::span(&header, 1)));
  uint64_t waits_bytes = uint64_t{header.wait_count} * sizeof(rig_proxy_wait);
  uint64_t parts_bytes = uint64_t{header.part_count} * sizeof(rig_proxy_part);
  if (sizeof header + waits_bytes + parts_bytes != bytes) return false;
  h.waits.resize(header.wait_count);
  h.parts.resize(header.part_count);
  payload.copy_out(offset + sizeof header, std::as_writable_bytes(std::span(h.waits)));
  payload.copy_out(offset + sizeof header + waits_bytes, std::as_writable_bytes(std::span(h.parts)));
  return true;
}

bool read_entry_fill(const rig_proxy_entry &entry, Handover &h) {
  if (entry.payload_offset != 0 || entry.payload_bytes != 0) return false;
  const uint64_t bytes = entry.args[3];
  h.waits.clear();
  h.parts.resize(1);
  h.parts[0] = {RIG_PROXY_PART_FILL, entry.flags, {0}, 0, entry.args[1], entry.args[2], bytes, 1, 0, bytes};
  return true;
}

void HeldParts::clear() noexcept {
  for (const HeldPart &p : parts_) {
    rig_buffer_unref(p.src);
    rig_buffer_unref(p.dst);
  }
  for (const HeldLaunch &l : launches_) rig_submission_unref(l.submission);
  for (rig_buffer_t *b : buffers_) rig_buffer_unref(b);
  parts_.clear();
  launches_.clear();
  buffers_.clear();
  params_.clear();
  rows_.clear();
}

void HeldParts::add_row(std::shared_ptr<SharedRow> row) {
  if (row && std::find(rows_.begin(), rows_.end(), row) == rows_.end()) rows_.push_back(std::move(row));
}

namespace {

// A words part's WORDS: its writes follow (rows of them), in the parts left.
bool words_fit(const rig_proxy_part &p, size_t parts_left) {
  return p.value == 0 && p.src == 0 && p.src_offset == 0 && p.dst == 0 && p.dst_offset == 0 && p.width == 0 &&
         p.src_pitch == 0 && p.dst_pitch == 0 && p.rows <= parts_left;
}

// A write of a words part: 8 bytes of dst, on a multiple of 8.
bool write_fits(const rig_proxy_part &p, rig_buffer_t *dst) {
  auto size = static_cast<uint64_t>(rig_buffer_bytes(dst));
  return p.kind == RIG_PROXY_PART_WORD && p.value == 0 && p.src_offset == 0 && p.width == 0 && p.rows == 0 &&
         p.src_pitch == 0 && p.dst_pitch == 0 && p.dst_offset % 8 == 0 && size >= 8 && p.dst_offset <= size - 8;
}

// Holds the words part at parts[i] and its writes; false if it does not fit.
bool hold_words(const ClientObjects &objects, const std::vector<rig_proxy_part> &parts, size_t i, HeldParts &held) {
  const rig_proxy_part &words = parts[i];
  held.add({words, nullptr, nullptr});
  if (!words_fit(words, parts.size() - i - 1)) return false;
  for (size_t j = i + 1; j <= i + words.rows; j++) {
    std::shared_ptr<SharedRow> row;
    rig_buffer_t *dst = objects.get(parts[j].dst, &row);
    held.add_row(std::move(row));
    bool fits = dst && write_fits(parts[j], dst);
    held.add({parts[j], nullptr, fits ? dst : nullptr});
    if (!fits) {
      rig_buffer_unref(dst);
      return false;
    }
  }
  return true;
}

constexpr uint64_t max_threads = uint64_t{1} << 62;

// The slots a launch's parameters take after its refs.
uint64_t param_slots(const rig_proxy_launch &l) {
  return (uint64_t{l.param_bytes} + sizeof(rig_proxy_part) - 1) / sizeof(rig_proxy_part);
}

// No axis zero, at most 2^62 threads, a group within the function's max.
bool grid_fits(const rig_proxy_launch &l, int64_t most_in_group) {
  uint64_t groups = 1, threads = 1, total = 0;
  bool over = false;
  for (int a = 0; a < 3; a++) {
    if (l.groups[a] == 0 || l.threads[a] == 0) return false;
    over |= __builtin_mul_overflow(groups, l.groups[a], &groups);
    over |= __builtin_mul_overflow(threads, l.threads[a], &threads);
  }
  over |= __builtin_mul_overflow(groups, threads, &total);
  return !over && total <= max_threads && threads <= static_cast<uint64_t>(most_in_group);
}

// Holds ref r of a launch of param_bytes parameters on instance, which
// runs on device runs: the view of its memory, borrowed on runs, into
// held, its layout into held.layout(); false where it does not fit.  (The
// machine's host's launches run on rigd's host, its memory on another
// device of this host: ServedDevices.)
bool hold_ref(const ClientObjects &objects, const LaunchContext &ctx, rig_device_t *runs, const rig_proxy_ref &r,
              uint32_t param_bytes, HeldParts &held) {
  bool zero = std::all_of(std::begin(r.reserved), std::end(r.reserved), [](uint32_t w) { return w == 0; });
  if (r.kind != RIG_PROXY_PART_REF || !zero || r.at > param_bytes || param_bytes - r.at < 8) return false;
  if (r.ref_kind == RIG_REF_ENTRY) {
    const ClientImages::Function *entry = ctx.images.function(r.function);
    if (r.handle || r.offset || r.bytes || r.access || !entry || entry->instance != ctx.instance ||
        !entry->places_address)
      return false;
    held.layout().push_back({r.ref_kind, 0, r.at, r.function});
    return true;
  }
  bool unordered = r.ref_kind == RIG_REF_UNORDERED;
  bool access_fits = unordered ? (r.access == RIG_ACCESS_READ || r.access == RIG_ACCESS_READ_WRITE) : r.access == 0;
  if (r.ref_kind < RIG_REF_READ || r.ref_kind > RIG_REF_UNORDERED || !access_fits || r.function) return false;
  std::shared_ptr<SharedRow> row;
  rig_buffer_t *b = objects.get(r.handle, &row);
  if (!b) return false;
  held.add_row(std::move(row));
  if (!rows_fit(r.offset, r.bytes, 1, 0, static_cast<uint64_t>(rig_buffer_bytes(b)))) {
    rig_buffer_unref(b);
    return false;
  }
  rig_buffer_t *view = extent_view(b, r.offset, r.bytes, 1, 0);
  if (!view) return false;
  rig_buffer_t *borrowed = nullptr;
  rig_status_t status = rig_buffer_borrow(runs, view, &borrowed);
  rig_buffer_unref(view);
  if (status != RIG_OK || !borrowed) return false;
  held.add_buffer(borrowed);
  held.layout().push_back({r.ref_kind, r.access, r.at, 0});
  return true;
}

// Holds the launch at parts[i], its refs and its parameters; *slots gets
// the slots it takes.  false where it does not fit.
bool hold_launch(const ClientObjects &objects, LaunchContext &ctx, const std::vector<rig_proxy_part> &parts, size_t i,
                 size_t *slots, HeldParts &held) {
  rig_proxy_launch l;
  std::memcpy(&l, &parts[i], sizeof l);
  size_t left = parts.size() - i - 1;
  if (l.param_bytes > RIG_PROXY_MAX_PARAM_BYTES || l.ref_count > left || param_slots(l) > left - l.ref_count)
    return false;
  *slots = 1 + l.ref_count + param_slots(l);
  const ClientImages::Function *f = ctx.images.function(l.function);
  if (!f || f->instance != ctx.instance || !grid_fits(l, f->max_threads)) return false;
  rig_device_t *runs = rig_image_device(rig_function_image(f->function));
  held.layout().clear();
  size_t first_buffer = held.buffers().size();
  for (size_t j = 0; j < l.ref_count; j++) {
    rig_proxy_ref r;
    std::memcpy(&r, &parts[i + 1 + j], sizeof r);
    if (!hold_ref(objects, ctx, runs, r, l.param_bytes, held)) return false;
  }
  std::vector<std::byte> &params = held.params();
  size_t first_param = params.size();
  const auto *bytes = reinterpret_cast<const std::byte *>(parts.data() + i + 1 + l.ref_count);
  params.insert(params.end(), bytes, bytes + l.param_bytes);
  rig_submission_t *s = ctx.images.launch(l.function, held.layout(), l.param_bytes);
  if (!s) return false;
  held.add_launch({l, s, first_buffer, held.buffers().size() - first_buffer, first_param});
  held.add({parts[i], nullptr, nullptr, held.launches().size() - 1});
  return true;
}

}  // namespace

namespace {

// Why a copy or fill part, which names memory the client holds, does not
// fit it: its numbers, in the part's own terms.
std::string misfit(size_t i, const rig_proxy_part &p, rig_buffer_t *src, rig_buffer_t *dst) {
  auto size = [](rig_buffer_t *b) { return std::to_string(rig_buffer_bytes(b)); };
  std::string at = "part " + std::to_string(i);
  if (p.kind == RIG_PROXY_PART_FILL)
    return at + " (a fill of " + std::to_string(p.width) + " bytes x " + std::to_string(p.rows) + " rows, byte " +
           std::to_string(p.value) + ") does not fit its memory: from byte " + std::to_string(p.dst_offset) + " of " +
           size(dst);
  return at + " (a copy of " + std::to_string(p.rows) + " rows of " + std::to_string(p.width) +
         " bytes) does not fit its memory: from byte " + std::to_string(p.src_offset) + " of " + size(src) +
         " (pitch " + std::to_string(p.src_pitch) + "), to byte " + std::to_string(p.dst_offset) + " of " +
         size(dst) + " (pitch " + std::to_string(p.dst_pitch) + ")";
}

}  // namespace

bool hold_parts(const ClientObjects &objects, const std::vector<rig_proxy_part> &parts, bool words,
                LaunchContext *launches, HeldParts &held, std::string *why) {
  auto refuse = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  for (size_t i = 0; i < parts.size(); i++) {
    const rig_proxy_part &p = parts[i];
    std::string at = "part " + std::to_string(i);
    if (p.kind == RIG_PROXY_PART_WORDS && words) {
      if (!hold_words(objects, parts, i, held))
        return refuse(at + " (words) is malformed, or a write of it is not 8 bytes on a multiple of 8 of memory "
                           "the client holds");
      i += p.rows;
      continue;
    }
    if (p.kind == RIG_PROXY_PART_LAUNCH && launches) {
      size_t slots = 1;
      if (!hold_launch(objects, *launches, parts, i, &slots, held))
        return refuse(at + " (a launch) is not one its function takes: its grid, parameters or refs");
      i += slots - 1;
      continue;
    }
    if (p.kind != RIG_PROXY_PART_COPY && p.kind != RIG_PROXY_PART_FILL)
      return refuse(at + " is of kind " + std::to_string(p.kind) + ", which this proxy does not run");
    std::shared_ptr<SharedRow> src_row, dst_row;
    rig_buffer_t *src = p.kind == RIG_PROXY_PART_COPY ? objects.get(p.src, &src_row) : nullptr;
    rig_buffer_t *dst = objects.get(p.dst, &dst_row);
    held.add_row(std::move(src_row));
    held.add_row(std::move(dst_row));
    bool sides = dst && (p.kind == RIG_PROXY_PART_FILL || src);
    HeldPart h{p, nullptr, nullptr};
    std::string reason;
    if (sides && part_fits(p, src, dst)) {
      h = spanned(p, src, dst);
    } else {
      reason = sides ? misfit(i, p, src, dst)
                     : at + " names handle " + std::to_string(dst ? p.src : p.dst) + ", which the client does not hold";
      rig_buffer_unref(src);
      rig_buffer_unref(dst);
    }
    bool whole = h.dst && (p.kind == RIG_PROXY_PART_FILL || (h.src && !rig_buffer_share_byte(h.src, h.dst)));
    if (reason.empty() && !whole) reason = at + " copies between two views of the same bytes";
    // Held even when refused, so that held releases its views.
    held.add(h);
    if (!whole) return refuse(reason);
  }
  return true;
}

namespace {

// Submits the words part held at parts[i] and its writes on device, after
// waits; *done is its point.
rig_status_t submit_words(const std::vector<HeldPart> &parts, size_t i, rig_device_t *device,
                          const std::vector<rig_point_t> &waits, rig_point_t *done) {
  size_t n = parts[i].part.rows;
  std::vector<rig_word_write_t> writes(n);
  // Each write's buffer on device: a host arena of the client's is borrowed
  // onto it (the host's work device maps host memory).
  std::vector<rig_buffer_t *> buffers(n, nullptr);
  rig_status_t status = RIG_OK;
  for (size_t j = 0; j < n && status == RIG_OK; j++) {
    const HeldPart &write = parts[i + 1 + j];
    writes[j] = {{static_cast<uint32_t>(j), nullptr}, static_cast<int64_t>(write.part.dst_offset), write.part.word};
    status = rig_buffer_borrow(device, write.dst, &buffers[j]);
    if (status == RIG_OK && !buffers[j]) status = RIG_EINVAL;
  }
  rig_part_t part{};
  part.kind = RIG_WORDS;
  part.u.words = {writes.data(), n};
  rig_submission_t *submission = nullptr;
  rig_run_t *run = nullptr;
  if (status == RIG_OK) status = rig_submission_make(device, &part, 1, nullptr, &submission);
  if (status == RIG_OK) status = rig_submission_take(submission, &run);
  if (status == RIG_OK) status = rig_submit(run, buffers.data(), n, waits.data(), waits.size(), done);
  rig_submission_unref(submission);
  for (rig_buffer_t *b : buffers) rig_buffer_unref(b);
  return status;
}

// Submits the held launch l through its submission, after waits; *done is
// its point.
rig_status_t submit_launch(const HeldParts &held, const HeldLaunch &l, const std::vector<rig_point_t> &waits,
                           rig_point_t *done) {
  const rig_proxy_launch &g = l.launch;
  rig_run_t *run = nullptr;
  rig_status_t status = rig_submission_take(l.submission, &run);
  int64_t k = rig_submission_block(l.submission, 0);
  auto axis = [](uint64_t v) { return static_cast<int64_t>(v); };
  if (status == RIG_OK) status = rig_run_groups(run, k, axis(g.groups[0]), axis(g.groups[1]), axis(g.groups[2]));
  if (status == RIG_OK) status = rig_run_threads(run, k, axis(g.threads[0]), axis(g.threads[1]), axis(g.threads[2]));
  if (status == RIG_OK) status = rig_run_shared(run, k, g.shared_bytes);
  if (status == RIG_OK && g.param_bytes)
    status = rig_run_bytes(run, k, 0, held.params().data() + l.first_param, g.param_bytes);
  if (status != RIG_OK) return status;
  return rig_submit(run, held.buffers().data() + l.first_buffer, l.buffers, waits.data(), waits.size(), done);
}

}  // namespace

rig_status_t submit_parts(const HeldParts &held, rig_device_t *device, const std::vector<rig_point_t> &waits,
                          std::vector<rig_point_t> &points) {
  // Parts follow the waits; a words part follows every earlier part too,
  // and every later part follows it: from the first words part on, parts
  // wait for after, the waits and the points so far (in after up to folded).
  const std::vector<rig_point_t> *follow = &waits;
  std::vector<rig_point_t> after;
  size_t folded = 0;
  const std::vector<HeldPart> &parts = held.parts();
  for (size_t i = 0; i < parts.size(); i++) {
    const HeldPart &h = parts[i];
    const rig_proxy_part &p = h.part;
    rig_point_t done;
    rig_status_t status;
    if (p.kind == RIG_PROXY_PART_WORDS) {
      if (follow != &after) after = waits;
      follow = &after;
      after.insert(after.end(), points.begin() + static_cast<ptrdiff_t>(folded), points.end());
      status = submit_words(parts, i, device, after, &done);
      if (status != RIG_OK) return status;
      points.push_back(done);
      folded = points.size();
      after.push_back(done);
      i += p.rows;
      continue;
    }
    if (p.kind == RIG_PROXY_PART_LAUNCH) {
      status = submit_launch(held, held.launches()[h.launch], *follow, &done);
    } else if (p.kind == RIG_PROXY_PART_COPY) {
      rig_box_t box{0, 0, static_cast<int64_t>(p.width), static_cast<int64_t>(p.rows),
                    static_cast<int64_t>(p.src_pitch), static_cast<int64_t>(p.dst_pitch)};
      status = rig_buffer_submit_copy(h.src, h.dst, &box, 1, follow->data(), follow->size(), &done);
    } else {
      status = rig_buffer_submit_fill(h.dst, static_cast<uint8_t>(p.value), follow->data(), follow->size(), &done);
    }
    if (status != RIG_OK) return status;
    points.push_back(done);
  }
  return RIG_OK;
}

}  // namespace rigd
