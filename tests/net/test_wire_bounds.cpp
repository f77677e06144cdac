// Each bound of the wire messages (net/wire_bounds.hpp) at its edge: the
// message at the bound encodes to its layout and decodes back, one past
// it the encoder refuses the values and the decoder the bytes, each
// saying the kind, the field and the numbers.
//
// The bounds carry the accounts of PROXY-04/PROXY-18/PROXY-65 (names,
// arch, the one host, the reach of ids of the list), the requests of
// PROXY-58 (ALLOC's bytes, a multiple of 4), PROXY-73 and PROXY-77 (image
// and function name), the hand-over of PROXY-45 (waits, parts, the
// launches' refs) and the bytes message of PROXY-37; the sizes of whole
// messages are those of PROXY-44 (a hand-over of any size up to 2^40
// bytes).
#include "test_wire_samples.hpp"

#include <sys/mman.h>

#include <limits>

using namespace wire;

namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

// ---- DEVICES

struct Device {
  Device(uint32_t id = 0, std::string name = "CPU", std::string arch = "x86_64", std::vector<uint32_t> reach = {})
      : id(id), name(std::move(name)), arch(std::move(arch)), reach(std::move(reach)) {}
  uint32_t id;
  std::string name;
  std::string arch;
  std::vector<uint32_t> reach;
};

Devices devices_of(const std::vector<Device> &list) {
  Devices m;
  for (const Device &d : list) m.accounts.push_back(Account{d.id, d.name, d.arch, 1, 2, d.reach});
  return m;
}

Raw raw_devices(const std::vector<Device> &list) {
  Raw raw;
  raw.header(Kind::Devices).u32(static_cast<uint32_t>(list.size()));
  for (const Device &d : list) {
    raw.u32(d.id).text(d.name).text(d.arch).u64(1).u64(2).u32(static_cast<uint32_t>(d.reach.size()));
    for (uint32_t id : d.reach) raw.u32(id);
  }
  return raw;
}

// The device list, accepted.
void assert_devices_accepted(const std::vector<Device> &list) { assert_accepted(devices_of(list), raw_devices(list)); }

// The device list, refused by both sides with why.
void assert_devices_refused(const std::vector<Device> &list, const std::string &why) {
  assert_refused(devices_of(list), why, raw_devices(list), why);
}

// n devices with ids 0 to n - 1.
std::vector<Device> devices(size_t n) {
  std::vector<Device> list(n);
  for (size_t i = 0; i < n; i++) list[i].id = static_cast<uint32_t>(i);
  return list;
}

}  // namespace

// PROXY-18: a device's name and arch are 1 to 64 bytes of printable ASCII.
Test(wire_bounds, a_device_name_and_arch_of_64_bytes_pass_and_65_or_0_are_refused) {
  assert_devices_accepted({{0, std::string(64, 'n'), std::string(64, 'a')}});
  assert_devices_accepted({{0, "C", "a"}});
  assert_devices_refused({{0, std::string(65, 'n')}}, "a DEVICES' device 0 (id 0): name of 65 bytes, at most 64");
  assert_devices_refused({{0, ""}}, "a DEVICES' device 0 (id 0): name of 0 bytes, at least 1");
  assert_devices_refused({{0, "CPU", std::string(65, 'a')}},
                         "a DEVICES' device 0 (id 0): arch of 65 bytes, at most 64");
  assert_devices_refused({{0, "CPU", ""}}, "a DEVICES' device 0 (id 0): arch of 0 bytes, at least 1");
}

Test(wire_bounds, a_device_name_of_bytes_past_printable_ascii_is_refused) {
  assert_devices_accepted({{0, " ~", "x"}});
  assert_devices_refused({{0, "CP\x7f"}}, "a DEVICES' device 0 (id 0): name's byte 2 is 127, not printable ASCII");
  assert_devices_refused({{0, "\x1f"}}, "a DEVICES' device 0 (id 0): name's byte 0 is 31, not printable ASCII");
  assert_devices_refused({{0, "CPU", "x86\xc3\xa9"}},
                         "a DEVICES' device 0 (id 0): arch's byte 3 is 195, not printable ASCII");
}

// PROXY-04: at most 256 devices, ids unique, exactly one host (id 0).
Test(wire_bounds, a_device_list_of_256_passes_and_257_is_refused) {
  assert_devices_accepted(devices(256));
  assert_devices_refused(devices(257), "a DEVICES of 257 devices, at most 256");
}

Test(wire_bounds, a_device_list_without_one_host_or_with_a_repeated_id_is_refused) {
  assert_devices_accepted({{0}});
  assert_devices_refused({}, "a DEVICES of 0 devices has no host (id 0)");
  assert_devices_refused({{1}, {2}}, "a DEVICES of 2 devices has no host (id 0)");
  assert_devices_refused({{0}, {0}}, "a DEVICES: devices 0 and 1 both have id 0");
  assert_devices_refused({{5}, {0}, {5}}, "a DEVICES: devices 0 and 2 both have id 5");
}

// PROXY-65: reach names ids of the list, none twice; a device may reach
// every device, itself included (MACH-08).
Test(wire_bounds, a_reach_of_ids_of_the_list_passes_and_others_or_repeats_are_refused) {
  std::vector<Device> list = devices(256);
  for (uint32_t id = 0; id < 256; id++) list[1].reach.push_back(255 - id);
  assert_devices_accepted(list);
  assert_devices_refused({{0, "CPU", "x86_64", {0, 7}}},
                         "a DEVICES' device 0 (id 0) reaches id 7, which no device of the list has");
  assert_devices_refused({{0, "CPU", "x86_64", {1}}, {1, "G", "g", {0, 1, 0}}},
                         "a DEVICES' device 1 (id 1) reaches id 0 twice");
  list[1].reach.push_back(0);
  assert_refused(devices_of(list), "a DEVICES' device 1 (id 1) of 257 reach ids, at most 256", raw_devices(list),
                 "a DEVICES of 256 devices: device 1 of 257 reach ids, at most 256");
}

// The largest DEVICES is exactly the bound the decoder enforces.
Test(wire_bounds, the_largest_device_list_is_the_devices_bound) {
  std::vector<Device> list = devices(256);
  for (Device &d : list) {
    d.name = d.arch = std::string(64, 'x');
    for (uint32_t id = 0; id < 256; id++) d.reach.push_back(id);
  }
  Raw raw = raw_devices(list);
  cr_assert_eq(raw.bytes.size(), max_message_size(Kind::Devices));
  assert_accepted(devices_of(list), raw);
}

// ---- REQUEST

namespace {
Raw raw_request(uint64_t number, Op op, uint64_t object = 100) {
  Raw raw;
  raw.header(Kind::Request).u64(number).u16(static_cast<uint16_t>(op)).u32(1).u64(object);
  return raw;
}
}  // namespace

Test(wire_bounds, an_open_configuration_of_4096_bytes_passes_and_4097_or_a_nul_is_refused) {
  std::string config(4096, 'c');
  assert_accepted(Request{1, 1, 100, Open{config}}, raw_request(1, Op::Open).text(config));
  assert_accepted(Request{1, 1, 100, Open{""}}, raw_request(1, Op::Open).text(""));
  config += 'c';
  assert_refused(Request{1, 1, 100, Open{config}}, "a REQUEST 1 (an OPEN): configuration of 4097 bytes, at most 4096",
                 raw_request(1, Op::Open).text(config),
                 "a REQUEST 1 (an OPEN): configuration of 4097 bytes, at most 4096");
  std::string nul("a=b\0c", 5);
  assert_refused(Request{1, 1, 100, Open{nul}}, "a REQUEST 1 (an OPEN): configuration has a NUL at byte 3",
                 raw_request(1, Op::Open).text(nul), "a REQUEST 1 (an OPEN): configuration has a NUL at byte 3");
}

// PROXY-58: ALLOC's bytes are positive and a multiple of 4 (Rig.word).
Test(wire_bounds, alloc_bytes_of_4_pass_and_0_or_6_are_refused) {
  assert_accepted(Request{2, 1, 100, Alloc{3, 4}}, raw_request(2, Op::Alloc).u32(3).u64(4));
  assert_accepted(Request{2, 1, 100, Alloc{3, kMax64 - 3}}, raw_request(2, Op::Alloc).u32(3).u64(kMax64 - 3));
  assert_refused(Request{2, 1, 100, Alloc{3, 0}}, "a REQUEST 2 (an ALLOC): bytes 0, at least 1",
                 raw_request(2, Op::Alloc).u32(3).u64(0), "a REQUEST 2 (an ALLOC): bytes 0, at least 1");
  assert_refused(Request{2, 1, 100, Alloc{3, 6}}, "a REQUEST 2 (an ALLOC): bytes 6, not a multiple of 4",
                 raw_request(2, Op::Alloc).u32(3).u64(6), "a REQUEST 2 (an ALLOC): bytes 6, not a multiple of 4");
}

// The ids of the job's objects are fresh from the client, never 0.
Test(wire_bounds, an_object_id_of_0_is_refused) {
  assert_refused(Request{2, 1, 0, Alloc{3, 4}},
                 "a REQUEST 2 (an ALLOC): object id 0, not an object's (they start at 1)",
                 raw_request(2, Op::Alloc, 0).u32(3).u64(4),
                 "a REQUEST 2 (an ALLOC): object id 0, not an object's (they start at 1)");
  assert_refused(
      Request{3, 1, 100, MapPeer{0}}, "a REQUEST 3 (a MAP_PEER): source id 0, not an object's (they start at 1)",
      raw_request(3, Op::MapPeer).u64(0), "a REQUEST 3 (a MAP_PEER): source id 0, not an object's (they start at 1)");
  assert_refused(Request{5, 1, 100, Entry{{0, "f"}}},
                 "a REQUEST 5 (an ENTRY): image id 0, not an object's (they start at 1)",
                 raw_request(5, Op::Entry).u64(0).text("f"),
                 "a REQUEST 5 (an ENTRY): image id 0, not an object's (they start at 1)");
  assert_refused(Release{Released::Object, 0}, "a RELEASE: object id 0, not an object's (they start at 1)",
                 Raw().header(Kind::Release).u16(1).u64(0),
                 "a RELEASE: object id 0, not an object's (they start at 1)");
}

// PROXY-73: an image of 1 byte to 256 MiB; the largest REQUEST is an
// IMAGE of 256 MiB, the bound the decoder enforces before reading.
// (Each 256 MiB pass of memory is one: a ThreadSanitizer build checks
// every byte of each.)
Test(wire_bounds, an_image_of_256_mib_passes_and_one_byte_more_or_none_is_refused) {
  std::string image(kImageMax + 1, '\x7f');
  std::string_view largest = std::string_view(image).substr(0, kImageMax);
  Raw raw = raw_request(4, Op::Image);
  raw.bytes.reserve(max_message_size(Kind::Request) + 1);
  raw.data(largest);
  cr_assert_eq(raw.bytes.size(), max_message_size(Kind::Request));
  assert_accepted(Request{4, 1, 100, Image{data_of(largest)}}, raw);
  assert_accepted(Request{4, 1, 100, Image{data_of("x")}}, raw_request(4, Op::Image).data("x"));
  assert_encode_refuses(Request{4, 1, 100, Image{data_of(image)}},
                        "a REQUEST 4 (an IMAGE): image of 268435457 bytes, at most 268435456");
  raw.bytes.push_back(0x7f);
  raw.bytes[layout::kHeader + layout::kRequestFixed] = 1;  // the length's low byte: 2^28 + 1
  assert_decode_refuses(raw.bytes, "a REQUEST of 268435491 bytes, at most 268435490");
  assert_refused(Request{4, 1, 100, Image{data_of("")}}, "a REQUEST 4 (an IMAGE): image of 0 bytes, at least 1",
                 raw_request(4, Op::Image).data(""), "a REQUEST 4 (an IMAGE): image of 0 bytes, at least 1");
}

// PROXY-77: a function name of 1 to 1024 bytes, no NUL.
Test(wire_bounds, a_function_name_of_1024_bytes_passes_and_1025_none_or_a_nul_are_refused) {
  std::string name(1024, 'f');
  assert_accepted(Request{5, 1, 100, Prepare{{7, name}}}, raw_request(5, Op::Prepare).u64(7).text(name));
  assert_accepted(Request{5, 1, 100, Entry{{7, "f"}}}, raw_request(5, Op::Entry).u64(7).text("f"));
  name += 'f';
  assert_refused(Request{5, 1, 100, Prepare{{7, name}}},
                 "a REQUEST 5 (a PREPARE): function name of 1025 bytes, at most 1024",
                 raw_request(5, Op::Prepare).u64(7).text(name),
                 "a REQUEST 5 (a PREPARE): function name of 1025 bytes, at most 1024");
  assert_refused(Request{5, 1, 100, Entry{{7, ""}}}, "a REQUEST 5 (an ENTRY): function name of 0 bytes, at least 1",
                 raw_request(5, Op::Entry).u64(7).text(""),
                 "a REQUEST 5 (an ENTRY): function name of 0 bytes, at least 1");
  std::string nul("f\0", 2);
  assert_refused(Request{5, 1, 100, Entry{{7, nul}}}, "a REQUEST 5 (an ENTRY): function name has a NUL at byte 1",
                 raw_request(5, Op::Entry).u64(7).text(nul),
                 "a REQUEST 5 (an ENTRY): function name has a NUL at byte 1");
}

// ---- ANSWER, RELEASE, FAILURE

namespace {
Raw raw_answer(int32_t status, std::string_view why) {
  return Raw().header(Kind::Answer).u64(6).i32(status).u64(1).u64(2).text(why);
}
}  // namespace

Test(wire_bounds, an_answer_why_of_1024_bytes_passes_and_1025_is_refused) {
  std::string why(1024, 'w');
  Raw raw = raw_answer(0, why);
  cr_assert_eq(raw.bytes.size(), max_message_size(Kind::Answer));
  assert_accepted(Answer{6, 0, 1, 2, why}, raw);
  why += 'w';
  assert_refused(Answer{6, 0, 1, 2, why}, "an ANSWER 6: why of 1025 bytes, at most 1024", raw_answer(0, why),
                 "an ANSWER of 1061 bytes, at most 1060");
}

// (The decoder refuses an ANSWER or a FAILURE past its bound by the
// message's size, before it reads a field.)

// An answer's status is a rig status code: RIG_OK down to RIG_EIMAGE.
Test(wire_bounds, an_answer_status_of_rig_codes_passes_and_others_are_refused) {
  assert_accepted(Answer{6, -8, 1, 2, ""}, raw_answer(-8, ""));
  assert_refused(Answer{6, -9, 1, 2, ""}, "an ANSWER 6: status -9, not a rig status code (-8 to 0)", raw_answer(-9, ""),
                 "an ANSWER 6: status -9, not a rig status code (-8 to 0)");
  assert_refused(Answer{6, 1, 1, 2, ""}, "an ANSWER 6: status 1, not a rig status code (-8 to 0)", raw_answer(1, ""),
                 "an ANSWER 6: status 1, not a rig status code (-8 to 0)");
}

// PROXY-61, PROXY-79: a RELEASE is of an object (1) or an image (2).
Test(wire_bounds, a_release_of_what_other_than_object_or_image_is_refused) {
  for (uint16_t what : {0, 3, 0xffff}) {
    std::string why = "a RELEASE of what " + std::to_string(what) + ", not 1 (an object) or 2 (an image)";
    assert_refused(Release{static_cast<Released>(what), 5}, why, Raw().header(Kind::Release).u16(what).u64(5), why);
  }
}

// PROXY-89: the root cause of a failure is 1 to 4096 bytes.
Test(wire_bounds, a_root_cause_of_4096_bytes_passes_and_4097_or_none_is_refused) {
  std::string cause(4096, 'r');
  Raw raw = Raw().header(Kind::Failure).text(cause);
  cr_assert_eq(raw.bytes.size(), max_message_size(Kind::Failure));
  assert_accepted(Failure{cause}, raw);
  cause += 'r';
  assert_refused(Failure{cause}, "a FAILURE: root cause of 4097 bytes, at most 4096",
                 Raw().header(Kind::Failure).text(cause), "a FAILURE of 4105 bytes, at most 4104");
  assert_refused(Failure{""}, "a FAILURE: root cause of 0 bytes, at least 1", Raw().header(Kind::Failure).text(""),
                 "a FAILURE: root cause of 0 bytes, at least 1");
}
