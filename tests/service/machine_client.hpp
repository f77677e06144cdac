// A client of rigd --listen for tests: a ClientChannel (machine_channel.hpp)
// with what it heard kept in order, and keys made for the agent and the
// client in a directory of the test's.
#pragma once

#include "machine_channel.hpp"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

// A key ring of one key, id, in directory/keys, and the client's copy of
// the key in directory/client-<id>; each file only its owner reads.
// Answers the ring's directory.
std::string make_key_ring(const std::string &directory, const std::string &id, const std::string &secret);
// A key file of the client's at directory/<name> holding secret.
std::string write_client_key(const std::string &directory, const std::string &name, const std::string &secret);
// A directory of the test's, made with mkdir: its path.
std::string make_test_directory();

// The address in rigd's "listening for machines on HOST:PORT" line.
struct RigdProcess;
std::string listening_address(const RigdProcess &rigd);

class MachineClient {
 public:
  // Connects to address proving the key in key_file as id; nullptr, with
  // *why, where it does not connect.
  static std::unique_ptr<MachineClient> connect(const std::string &address, const std::string &key_file,
                                                const std::string &id, std::string *why);
  const std::vector<rig::net::MachineAccount> &devices() const { return channel_->devices(); }

  // Sends a message; false where the connection failed.
  bool send(const rig::net::wire::Message &message);
  // Sends a REQUEST numbered next and waits for its ANSWER (status, value,
  // detail, why); nullopt where the connection failed first.
  struct Answer {
    int32_t status;
    uint64_t value, detail;
    std::string why;
  };
  std::optional<Answer> request(uint32_t device, uint64_t object, rig::net::wire::Operation op);
  // Waits until the agent reported value of device, or the connection
  // failed: whether it reported it.
  bool await_report(uint32_t device, uint64_t value);
  // Waits until the connection failed: its failure.
  std::string await_failure();

  // What the client heard, in order: "REPORT d v", "BYTES d v p".
  std::vector<std::string> heard();
  // The bytes that BYTES brought for part p of value v of device d.
  std::vector<uint8_t> bytes_of(uint32_t device, uint64_t value, uint32_t part);

 private:
  MachineClient() = default;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> heard_;
  std::map<uint64_t, Answer> answers_;
  std::map<uint32_t, uint64_t> reported_;
  std::map<std::tuple<uint32_t, uint64_t, uint32_t>, std::vector<uint8_t>> bytes_;
  std::optional<std::string> failure_;
  uint64_t next_number_ = 1;
  std::unique_ptr<rig::net::ClientChannel> channel_;  // last: its handlers use the rest
};
