// One message of each kind of the wire, REQUEST once per op and a
// HANDOVER of each part kind: the wire suites' samples and the fuzz
// target's seeds (make_wire_corpus).
#pragma once

#include "wire_messages.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace wire = rig::net::wire;

inline std::span<const uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}
inline wire::Data data_of(std::string_view text) { return wire::Data{bytes_of(text)}; }

// The texts and data the samples view.
inline const std::string kImageBytes =
    "\x7f"
    "ELF image bytes";
inline const std::string kPutBytes = "put bytes";
inline const std::string kGotBytes = "got bytes";
inline const std::string kParameters(24, '\x11');

// One message of each kind, REQUEST once per op and HANDOVER carrying one
// part of each kind, each with distinct values in every field.
inline std::vector<wire::Message> sample_messages() {
  using namespace wire;
  Devices devices{{Account{0, "CPU", "x86_64", 1 << 30, 1 << 20, {1}},
                   Account{1, "CUDA:0", "sm_90", uint64_t{80} << 30, 50 << 20, {0, 2}},
                   Account{2, "CUDA:1", "sm_90", uint64_t{81} << 30, 51 << 20, {}}}};
  Launch launch{7, 8, {1, 2, 3}, {4, 5, 6}, 1024, data_of(kParameters), {{{9, 16}, 0}, {{10, 32}, 16}}};
  Handover handover{
      1,
      42,
      {{0, 41}, {2, 7}},
      {Copy{{11, 1}, {12, 2}, 3}, Put{{13, 4}, data_of(kPutBytes)}, Get{{14, 5}, 6}, Fill{{15, 7}, 8, 0xab}, launch,
       Words{{{{16, 8}, 0x1122334455667788}, {{17, 0}, 2}}}}};
  return {
      devices,
      Request{1, 1, 100, Open{"rigd.conf: a=b"}},
      Request{2, 1, 101, Alloc{0, 4096}},
      Request{3, 2, 102, MapPeer{101}},
      Request{4, 0, 103, Image{data_of(kImageBytes)}},
      Request{5, 0, 104, Prepare{{103, "kernel"}}},
      Request{6, 0, 105, Entry{{103, "kernel"}}},
      Answer{6, -8, 9, 10, "the image has no such function"},
      Release{Released::Object, 101},
      Release{Released::Image, 103},
      handover,
      Report{1, 42},
      Bytes{1, 42, 2, 3, data_of(kGotBytes)},
      Failure{"the agent lost CUDA:0: Xid 79"},
      Close{},
  };
}
