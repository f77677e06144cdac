// Work through librig's public API whose results a client checks, for the
// client processes of tests of rigd (client_process.hpp).  Every function
// throws (require) where a call into rig fails or a byte is wrong.
#pragma once

#include <rig/rig.h>

#include <cstdint>
#include <string>
#include <vector>

// Connects this process to the rigd listening at socket.
void connect_service(const std::string &socket);
rig_device_t *open_device(const std::string &name);
// n bytes of d's own memory.
rig_buffer_t *create_buffer(rig_device_t *d, int64_t n);
// In an importing client: a buffer on d over the export whose token the
// exporter sends on link (rig_service_import).
rig_buffer_t *import_sent_token(int link, rig_device_t *d);
// The same, then tells the exporter it imported and returns once the
// exporter is gone (its end of link closed, with nothing more sent).
rig_buffer_t *import_until_the_exporter_goes(int link, rig_device_t *d);

// Byte i of the pattern that seed names.
uint8_t pattern_byte(uint64_t seed, int64_t i);
// Writes the pattern of seed into all of b (rig_buffer_blit_from_bytes).
void write_pattern(rig_buffer_t *b, uint64_t seed);
// b's bytes (rig_buffer_blit_to_bytes).
std::vector<uint8_t> read_bytes(rig_buffer_t *b);
// Checks that b's bytes are the pattern of seed from its byte first on.
void check_pattern(rig_buffer_t *b, uint64_t seed, int64_t first = 0);

// Three buffers of one device and a computation with a known result: the
// pattern of a seed written into a, copied into b, and c filled with the
// seed's low byte; run() checks b and c after.
class KnownWork {
 public:
  KnownWork(rig_device_t *d, int64_t bytes);
  ~KnownWork();
  KnownWork(const KnownWork &) = delete;
  KnownWork &operator=(const KnownWork &) = delete;
  void run(uint64_t seed);

 private:
  rig_buffer_t *a_, *b_, *c_;
};

// The body of a client that runs KnownWork on MEM:0@rigd and SIM:0@rigd of
// the rigd at socket over and over: it sends 1 on channel once its buffers
// exist, runs until the test sends on channel, then sends how many rounds
// it ran and answers 0.
int run_steady_client(const std::string &socket, int channel);
