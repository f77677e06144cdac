// Device knobs that exist for tests (the sim's latency_us, hang_ms,
// fault_at and budget): through rigd they would let one client's choices
// reach what rigd shares (its threads, its shutdown, its memory), so rigd
// refuses a configuration that sets one unless its policy allows them
// (test_knobs = allow).
#pragma once

#include <string>

namespace rigd {

// The first test knob a device configuration ("key=value,...") sets, or
// "" where it sets none.
std::string test_knob_in(const std::string &config);

}  // namespace rigd
