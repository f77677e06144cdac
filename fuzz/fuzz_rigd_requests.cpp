// libFuzzer target of rigd's entry parser (service/requests.cpp, and the
// hand-overs of service/handover.cpp): whatever entries a client writes to
// its submission ring and whatever bytes to its payload arena, rigd answers
// each entry but a hand-over it takes with a completion that follows
// protocol.h, and never crashes, leaks or trips a sanitizer (DESIGN.md "The
// per-host service": a bad entry gets an error completion).
//
// The input is a sequence of steps, each led by a byte that picks it: a raw
// entry (the next 64 bytes as they come), raw bytes written into the payload
// arena, or a request built from the input with what earlier answers gave
// (proxies, handles, export tokens), so that opens, small allocs, hand-overs
// with well-formed parts, exports and imports succeed often and rigd's state
// grows deep enough for the raw entries to hit it.  A model of the client's
// state, kept from the completions alone, checks each answer: its tag and
// fields (protocol.h), RIG_EINVAL changing nothing, handles that are new,
// the quota, PROXY-10 (a hand-over takes the proxy's next value) and, once
// the values are done, PROXY-80 (each proxy's word holds its last value
// done).  Image loads carry the input's bytes, which the memory device
// refuses (RIG_EIMAGE with why), and hand-overs carry launch parts, with
// refs among the client's handles: rigd refuses each, losing its proxy,
// as none names a function of the client's.  The target runs no client's
// host code (rigd's host_code stays deny): an input's image would be code
// it runs.
#include "exports.hpp"
#include "rigd_fuzz.hpp"
#include "rigd_steps.hpp"

#include <memory>

using namespace rigd_fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider input(data, size);
  Model model;
  rigd::Exports exports(served());
  auto client = std::make_unique<Client>(exports, 1);
  Steps steps(input, model, client->arena());
  while (input.remaining_bytes() > 0) {
    rig_proxy_entry e;
    if (!steps.next(e)) continue;
    rig_proxy_completion answer;
    bool answered = client->handle(e, answer);
    model.observe(e, answered, answer);
  }
  // The client's completions wait for every value as they end.
  model.check_words(client->end());
  client.reset();
  settle();
  return 0;
}
