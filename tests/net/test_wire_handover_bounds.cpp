// The bounds of HANDOVER and BYTES (net/wire_bounds.hpp) at their edges,
// and of a whole message: at the bound the values encode to their layout
// and decode back; past it the encoder refuses the values and the
// decoder the bytes, naming the part, the field and the numbers.
//
// Asserts the form of PROXY-45 (a hand-over's waits and parts, each part
// with its objects, offsets and bytes, launches with their refs), PROXY-37
// (a bytes message of a GET part), PROXY-32 and PROXY-36 (a WORDS part's
// writes, aligned words of objects) and PROXY-44 (a hand-over of any size:
// the decoder takes a message of 2^40 bytes, one byte more it refuses
// before reading a field).
#include "test_wire_samples.hpp"

#include <sys/mman.h>

#include <limits>

using namespace wire;

namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

// The bytes of a hand-over whatever its values, as the layout lays them.
Raw raw_handover(const Handover &h) {
  Raw raw;
  raw.header(Kind::Handover).u32(h.device).u64(h.value).u32(static_cast<uint32_t>(h.waits.size()));
  for (const Wait &w : h.waits) raw.u32(w.device).u64(w.value);
  raw.u32(static_cast<uint32_t>(h.parts.size()));
  for (const Part &part : h.parts) {
    raw.u16(static_cast<uint16_t>(part.index() + 1));
    if (auto *c = std::get_if<Copy>(&part))
      raw.u64(c->source.object).u64(c->source.offset).u64(c->target.object).u64(c->target.offset).u64(c->bytes);
    if (auto *p = std::get_if<Put>(&part)) raw.u64(p->target.object).u64(p->target.offset).u64(p->data.size());
    if (auto *p = std::get_if<Put>(&part))
      raw.bytes.insert(raw.bytes.end(), p->data.bytes.begin(), p->data.bytes.end());
    if (auto *g = std::get_if<Get>(&part)) raw.u64(g->source.object).u64(g->source.offset).u64(g->bytes);
    if (auto *f = std::get_if<Fill>(&part)) raw.u64(f->target.object).u64(f->target.offset).u64(f->bytes).u8(f->byte);
    if (auto *l = std::get_if<Launch>(&part)) {
      raw.u64(l->image).u64(l->function);
      for (uint32_t n : l->grid) raw.u32(n);
      for (uint32_t n : l->group) raw.u32(n);
      raw.u32(l->shared_bytes).u64(l->parameters.size());
      raw.bytes.insert(raw.bytes.end(), l->parameters.bytes.begin(), l->parameters.bytes.end());
      raw.u32(static_cast<uint32_t>(l->refs.size()));
      for (const Ref &ref : l->refs) raw.u64(ref.place.object).u64(ref.place.offset).u32(ref.parameter_offset);
    }
    if (auto *w = std::get_if<Words>(&part)) {
      raw.u32(static_cast<uint32_t>(w->writes.size()));
      for (const Word &write : w->writes) raw.u64(write.place.object).u64(write.place.offset).u64(write.value);
    }
  }
  return raw;
}

void assert_handover_accepted(const Handover &h) { assert_accepted(h, raw_handover(h)); }

// Refused by both sides with why.
void assert_handover_refused(const Handover &h, const std::string &why) {
  assert_refused(h, why, raw_handover(h), why);
}

// A hand-over of the one part.
Handover of(Part part) { return Handover{1, 1, {}, {std::move(part)}}; }

const std::string kParameterBytes(kParametersMax + 1, '\x5a');

// A launch of grid and group 1 1 1 over the first n parameter bytes.
Launch launch_of(size_t parameters, std::vector<Ref> refs = {}) {
  return Launch{
      1, 2, {1, 1, 1}, {1, 1, 1}, 0, data_of(std::string_view(kParameterBytes).substr(0, parameters)), std::move(refs)};
}

}  // namespace

Test(wire_handover_bounds, a_value_of_0_is_refused) {
  assert_handover_accepted(Handover{1, kMax64, {}, {Get{{1, 0}, 1}}});
  assert_handover_refused(Handover{1, 0, {}, {Get{{1, 0}, 1}}}, "a HANDOVER: value 0, at least 1");
}

// PROXY-45: at most 64 waits.
Test(wire_handover_bounds, a_handover_of_64_waits_passes_and_65_are_refused) {
  Handover h{1, 1, std::vector<Wait>(64, Wait{2, 3}), {Get{{1, 0}, 1}}};
  assert_handover_accepted(h);
  h.waits.push_back(Wait{2, 4});
  assert_handover_refused(h, "a HANDOVER of 65 waits, at most 64");
}

// PROXY-45: 0 to 65536 parts (a value with no work, such as an image
// load's, is handed over too).
Test(wire_handover_bounds, the_65536th_part_passes_and_the_65537th_is_refused) {
  Handover h{1, 1, {}, {}};
  assert_handover_accepted(h);
  for (uint64_t i = 0; i < kPartsMax; i++) h.parts.emplace_back(std::in_place_type<Get>, Place{i + 1, i}, 1);
  assert_handover_accepted(h);
  h.parts.emplace_back(std::in_place_type<Fill>, Place{1, 0}, 1, 0);
  assert_handover_refused(h, "a HANDOVER of 65537 parts, at most 65536");
}

Test(wire_handover_bounds, a_part_of_no_bytes_is_refused) {
  assert_handover_refused(of(Copy{{1, 0}, {2, 0}, 0}), "a HANDOVER's part 0 (a COPY): bytes 0, at least 1");
  assert_handover_refused(of(Put{{1, 0}, data_of("")}), "a HANDOVER's part 0 (a PUT): bytes 0, at least 1");
  assert_handover_refused(of(Get{{1, 0}, 0}), "a HANDOVER's part 0 (a GET): bytes 0, at least 1");
  assert_handover_refused(of(Fill{{1, 0}, 0, 7}), "a HANDOVER's part 0 (a FILL): bytes 0, at least 1");
}

Test(wire_handover_bounds, a_part_of_object_id_0_is_refused) {
  assert_handover_refused(of(Copy{{0, 0}, {2, 0}, 1}),
                          "a HANDOVER's part 0 (a COPY): source id 0, not an object's (they start at 1)");
  assert_handover_refused(of(Copy{{1, 0}, {0, 0}, 1}),
                          "a HANDOVER's part 0 (a COPY): target id 0, not an object's (they start at 1)");
  assert_handover_refused(of(Put{{0, 0}, data_of("x")}),
                          "a HANDOVER's part 0 (a PUT): target id 0, not an object's (they start at 1)");
  assert_handover_refused(of(Get{{0, 0}, 1}),
                          "a HANDOVER's part 0 (a GET): source id 0, not an object's (they start at 1)");
  assert_handover_refused(of(Fill{{0, 0}, 1, 0}),
                          "a HANDOVER's part 0 (a FILL): target id 0, not an object's (they start at 1)");
  Launch launch = launch_of(0);
  launch.image = 0;
  assert_handover_refused(of(launch), "a HANDOVER's part 0 (a LAUNCH): image id 0, not an object's (they start at 1)");
  launch.image = 1;
  launch.function = 0;
  assert_handover_refused(of(launch),
                          "a HANDOVER's part 0 (a LAUNCH): function id 0, not an object's (they start at 1)");
}

// An offset plus the bytes from it stays within 64 bits: up to 2^64 - 1
// passes, one byte more overflows.
Test(wire_handover_bounds, an_offset_plus_bytes_past_2_64_is_refused) {
  assert_handover_accepted(of(Copy{{1, kMax64 - 1}, {2, kMax64 - 2}, 1}));
  assert_handover_accepted(of(Put{{1, kMax64 - 1}, data_of("x")}));
  assert_handover_accepted(of(Get{{1, kMax64 - 5}, 5}));
  assert_handover_accepted(of(Fill{{1, 1}, kMax64 - 1, 0}));
  assert_handover_refused(
      of(Copy{{1, kMax64}, {2, 0}, 1}),
      "a HANDOVER's part 0 (a COPY): source offset 18446744073709551615 plus 1 byte overflows 64 bits");
  assert_handover_refused(
      of(Copy{{1, 0}, {2, 2}, kMax64 - 1}),
      "a HANDOVER's part 0 (a COPY): target offset 2 plus 18446744073709551614 bytes overflows 64 bits");
  assert_handover_refused(
      of(Put{{1, kMax64 - 1}, data_of("xy")}),
      "a HANDOVER's part 0 (a PUT): target offset 18446744073709551614 plus 2 bytes overflows 64 bits");
  assert_handover_refused(
      of(Get{{1, kMax64 - 4}, 5}),
      "a HANDOVER's part 0 (a GET): source offset 18446744073709551611 plus 5 bytes overflows 64 bits");
  assert_handover_refused(
      of(Fill{{1, 2}, kMax64 - 1, 0}),
      "a HANDOVER's part 0 (a FILL): target offset 2 plus 18446744073709551614 bytes overflows 64 bits");
}

Test(wire_handover_bounds, a_launch_of_a_grid_or_group_size_0_is_refused) {
  const char *axes[] = {"x", "y", "z"};
  for (size_t axis = 0; axis < 3; axis++) {
    Launch launch = launch_of(8);
    launch.grid[axis] = 0;
    assert_handover_refused(of(launch),
                            std::string("a HANDOVER's part 0 (a LAUNCH): grid ") + axes[axis] + " 0, at least 1");
    launch.grid[axis] = 0xffffffff;
    assert_handover_accepted(of(launch));
    launch.group[axis] = 0;
    assert_handover_refused(of(launch),
                            std::string("a HANDOVER's part 0 (a LAUNCH): group ") + axes[axis] + " 0, at least 1");
  }
}

Test(wire_handover_bounds, launch_parameters_of_32768_bytes_pass_and_32769_are_refused) {
  assert_handover_accepted(of(launch_of(kParametersMax)));
  assert_handover_accepted(of(launch_of(0)));
  assert_handover_refused(of(launch_of(kParametersMax + 1)),
                          "a HANDOVER's part 0 (a LAUNCH): parameters of 32769 bytes, at most 32768");
}

Test(wire_handover_bounds, a_launch_of_256_refs_passes_and_257_are_refused) {
  std::vector<Ref> refs;
  for (uint32_t i = 0; i < kRefsMax; i++) refs.push_back(Ref{{i + 1, i}, (kRefsMax - 1 - i) * kRefBytes});
  assert_handover_accepted(of(launch_of(kRefsMax * kRefBytes, refs)));
  refs.push_back(Ref{{1, 0}, 0});
  Handover h = of(launch_of(kParametersMax, refs));
  assert_refused(h, "a HANDOVER's part 0 (a LAUNCH) of 257 refs, at most 256", raw_handover(h),
                 "a HANDOVER of 1 part: part 0 (a LAUNCH) of 257 refs, at most 256");
}

// A ref's address goes at an 8-byte aligned offset within the parameters.
Test(wire_handover_bounds, a_ref_misaligned_or_past_the_parameters_is_refused) {
  assert_handover_accepted(of(launch_of(24, {{{1, 0}, 16}})));
  assert_handover_refused(of(launch_of(24, {{{1, 0}, 0}, {{1, 0}, 4}})),
                          "a HANDOVER's part 0 (a LAUNCH)'s ref 1: parameter offset 4, not a multiple of 8");
  assert_handover_refused(of(launch_of(24, {{{1, 0}, 24}})),
                          "a HANDOVER's part 0 (a LAUNCH)'s ref 0: parameter offset 24 ends at byte 32, past the "
                          "parameters' 24");
  assert_handover_refused(of(launch_of(20, {{{1, 0}, 16}})),
                          "a HANDOVER's part 0 (a LAUNCH)'s ref 0: parameter offset 16 ends at byte 24, past the "
                          "parameters' 20");
  assert_handover_refused(of(launch_of(24, {{{0, 0}, 0}})),
                          "a HANDOVER's part 0 (a LAUNCH)'s ref 0: object id 0, not an object's (they start at 1)");
}

Test(wire_handover_bounds, overlapping_refs_are_refused) {
  assert_handover_accepted(of(launch_of(24, {{{1, 0}, 8}, {{2, 0}, 0}, {{3, 0}, 16}})));
  assert_handover_refused(of(launch_of(24, {{{1, 0}, 8}, {{2, 0}, 0}, {{3, 0}, 8}})),
                          "a HANDOVER's part 0 (a LAUNCH): refs 0 and 2 overlap at parameter offset 8");
}

// ---- WORDS (PROXY-32, PROXY-36): 1 to 65536 writes, each to an object's
// 8-byte aligned word.

Words words_of(size_t count) {
  Words words;
  for (size_t i = 0; i < count; i++) words.writes.push_back(Word{{i + 1, 8 * i}, i * 3});
  return words;
}

Test(wire_handover_bounds, words_of_1_and_65536_writes_pass_0_and_65537_are_refused) {
  assert_handover_accepted(of(words_of(1)));
  assert_handover_accepted(of(words_of(kWordsMax)));
  // The decoder refuses the empty part as too short for a part first.
  Handover empty = of(words_of(0));
  assert_refused(empty, "a HANDOVER's part 0 (a WORDS) of 0 writes, at least 1", raw_handover(empty),
                 "a HANDOVER of 1 part ends at byte 50 of 30, in parts");
  // Where a later part's bytes fill the parts' least, the empty WORDS is.
  static const std::string put(20, 'x');
  Handover empty_first = Handover{1, 1, {}, {words_of(0), Put{{1, 0}, data_of(put)}}};
  assert_refused(empty_first, "a HANDOVER's part 0 (a WORDS) of 0 writes, at least 1", raw_handover(empty_first),
                 "a HANDOVER of 2 parts: part 0 (a WORDS) of 0 writes, at least 1");
  Handover h = of(words_of(kWordsMax + 1));
  assert_refused(h, "a HANDOVER's part 0 (a WORDS) of 65537 writes, at most 65536", raw_handover(h),
                 "a HANDOVER of 1 part: part 0 (a WORDS) of 65537 writes, at most 65536");
}

Test(wire_handover_bounds, a_word_misaligned_of_object_0_or_past_2_64_is_refused) {
  assert_handover_accepted(of(Words{{{{1, kMax64 - 15}, 5}}}));
  assert_handover_refused(of(Words{{{{1, 8}, 0}, {{1, 12}, 0}}}),
                          "a HANDOVER's part 0 (a WORDS)'s write 1: target offset 12, not a multiple of 8");
  assert_handover_refused(of(Words{{{{0, 0}, 0}}}),
                          "a HANDOVER's part 0 (a WORDS)'s write 0: target id 0, not an object's (they start at 1)");
  assert_handover_refused(
      of(Words{{{{1, kMax64 - 7}, 0}}}),
      "a HANDOVER's part 0 (a WORDS)'s write 0: target offset 18446744073709551608 plus 8 bytes overflows 64 bits");
}

// A WORDS whose writes end past the message is refused naming them.
Test(wire_handover_bounds, a_words_part_cut_short_is_refused_naming_its_writes) {
  Raw raw = raw_handover(of(words_of(2)));
  // erase, not resize: GCC 12 at -O1 cannot see that the size exceeds 4.
  raw.bytes.erase(raw.bytes.end() - 4, raw.bytes.end());
  assert_decode_refuses(raw.bytes, "a HANDOVER of 1 part ends at byte " + std::to_string(raw.bytes.size() + 4) +
                                       " of " + std::to_string(raw.bytes.size()) +
                                       ", in part 0 (a WORDS)'s writes");
}

// ---- BYTES (PROXY-37)

namespace {
Raw raw_bytes(uint64_t value, uint32_t part, uint64_t offset, std::string_view data) {
  return Raw().header(Kind::Bytes).u32(1).u64(value).u32(part).u64(offset).data(data);
}
}  // namespace

Test(wire_handover_bounds, bytes_of_part_65535_pass_and_65536_are_refused) {
  assert_accepted(Bytes{1, 2, 65535, 0, data_of("b")}, raw_bytes(2, 65535, 0, "b"));
  assert_refused(Bytes{1, 2, 65536, 0, data_of("b")}, "a BYTES: part 65536, at most 65535", raw_bytes(2, 65536, 0, "b"),
                 "a BYTES: part 65536, at most 65535");
}

Test(wire_handover_bounds, bytes_of_value_0_none_or_past_2_64_are_refused) {
  assert_accepted(Bytes{1, 2, 0, kMax64 - 1, data_of("b")}, raw_bytes(2, 0, kMax64 - 1, "b"));
  assert_refused(Bytes{1, 0, 0, 0, data_of("b")}, "a BYTES: value 0, at least 1", raw_bytes(0, 0, 0, "b"),
                 "a BYTES: value 0, at least 1");
  assert_refused(Bytes{1, 2, 0, 0, data_of("")}, "a BYTES: bytes 0, at least 1", raw_bytes(2, 0, 0, ""),
                 "a BYTES: bytes 0, at least 1");
  assert_refused(Bytes{1, 2, 0, kMax64, data_of("b")},
                 "a BYTES: offset 18446744073709551615 plus 1 byte overflows 64 bits", raw_bytes(2, 0, kMax64, "b"),
                 "a BYTES: offset 18446744073709551615 plus 1 byte overflows 64 bits");
}

// ---- a whole message: at most 2^40 bytes (PROXY-44)

// The encoder adds up a hand-over's size before it allocates a byte: 65536
// PUTs of 16 MiB (one buffer, viewed by each) pass 2^40.
Test(wire_handover_bounds, the_encoder_refuses_a_handover_past_2_40_bytes) {
  std::string put(size_t{16} << 20, 'p');
  Handover h{1, 1, {}, std::vector<Part>(kPartsMax, Put{{1, 0}, data_of(put)})};
  uint64_t size = layout::kHeader + 4 + 8 + 4 + 4 + kPartsMax * (2 + 8 + 8 + 8 + put.size());
  cr_assert_eq(encoded_size(h), size);
  assert_encode_refuses(h, "a HANDOVER of " + std::to_string(size) + " bytes, at most 1099511627776");
}

// The decoder takes a HANDOVER of 2^40 bytes, a PUT's bytes filling it,
// without reading those bytes, and refuses one byte more before reading a
// field.  The bytes lie in memory mapped without reserve, of which only
// the first page is touched.
Test(wire_handover_bounds, the_decoder_takes_2_40_bytes_and_refuses_one_more) {
  size_t length = kMessageMax + 1;
  void *memory = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) cr_skip_test("no 2^40 bytes of address space to map: %s", strerror(errno));
  auto *bytes = static_cast<uint8_t *>(memory);
  uint64_t fields = layout::kHeader + 4 + 8 + 4 + 4 + 2 + 8 + 8 + 8;
  Raw head = Raw().header(Kind::Handover).u32(1).u64(1).u32(0).u32(1).u16(2).u64(1).u64(0).u64(kMessageMax - fields);
  cr_assert_eq(head.bytes.size(), fields);
  std::copy(head.bytes.begin(), head.bytes.end(), bytes);
  Message message = decoded({bytes, kMessageMax});
  const Put &put = std::get<Put>(std::get<Handover>(message).parts[0]);
  cr_assert_eq(put.data.bytes.data(), bytes + fields);
  cr_assert_eq(put.data.size(), kMessageMax - fields);
  assert_decode_refuses({bytes, length}, "a HANDOVER of 1099511627777 bytes, at most 1099511627776");
  munmap(memory, length);
}
