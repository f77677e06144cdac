// A client of rigd --listen for tests (machine_client.hpp).
#include "machine_client.hpp"

#include "rigd_log.hpp"
#include "rigd_process.hpp"

#include <criterion/criterion.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace wire = rig::net::wire;

namespace {

// How long a test waits for what must come: only a hang reaches it.
constexpr std::chrono::seconds patience{20};

void write_private_file(const std::string &path, const std::string &text) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  cr_assert(fd >= 0, "cannot make %s: %s", path.c_str(), std::strerror(errno));
  cr_assert(write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  close(fd);
}

}  // namespace

std::string make_test_directory() {
  // A test that failed left its directory, whose pid a later test may
  // have: the next number then.
  static std::atomic<int> made{0};
  for (;;) {
    std::string dir = (std::filesystem::temp_directory_path() /
                       ("rigd-machines-" + std::to_string(getpid()) + "-" + std::to_string(++made)))
                          .string();
    if (mkdir(dir.c_str(), 0700) == 0) return dir;
    cr_assert(errno == EEXIST, "cannot make %s: %s", dir.c_str(), std::strerror(errno));
  }
}

std::string make_key_ring(const std::string &directory, const std::string &id, const std::string &secret) {
  std::string ring = directory + "/keys";
  cr_assert(mkdir(ring.c_str(), 0700) == 0);
  write_private_file(ring + "/" + id, secret);
  write_client_key(directory, "client-" + id, secret);
  return ring;
}

std::string write_client_key(const std::string &directory, const std::string &name, const std::string &secret) {
  std::string path = directory + "/" + name;
  write_private_file(path, secret);
  return path;
}

std::string listening_address(const RigdProcess &rigd) {
  const std::string said = "listening for machines on ";
  std::vector<std::string> lines = await_lines(rigd, {said});
  cr_assert(!lines.empty(), "rigd does not listen for machines:\n%s", whole_log(rigd).c_str());
  const std::string &line = lines.front();
  return line.substr(line.find(said) + said.size());
}

std::unique_ptr<MachineClient> MachineClient::connect(const std::string &address, const std::string &key_file,
                                                      const std::string &id, std::string *why) {
  rig::net::Outcome<rig::net::ClientKey> key = rig::net::load_client_key(key_file, id);
  cr_assert(key.ok(), "%s", key.ok() ? "" : key.error().message.c_str());
  std::unique_ptr<MachineClient> client(new MachineClient);
  MachineClient *c = client.get();
  rig::net::ChannelHandlers handlers;
  handlers.message = [c](const wire::Message &m) {
    std::lock_guard g(c->mu_);
    if (const auto *a = std::get_if<wire::Answer>(&m)) {
      c->answers_[a->number] = {a->status, a->value, a->detail, std::string(a->why)};
    } else if (const auto *r = std::get_if<wire::Report>(&m)) {
      c->heard_.push_back("REPORT " + std::to_string(r->device) + " " + std::to_string(r->value));
      c->reported_[r->device] = r->value;
    } else if (const auto *b = std::get_if<wire::Bytes>(&m)) {
      c->heard_.push_back("BYTES " + std::to_string(b->device) + " " + std::to_string(b->value) + " " +
                          std::to_string(b->part));
    }
    c->changed_.notify_all();
  };
  handlers.place_bytes = [c](const wire::Bytes &head, uint64_t length) {
    std::lock_guard g(c->mu_);
    std::vector<uint8_t> &bytes = c->bytes_[{head.device, head.value, head.part}];
    bytes.resize(head.offset + length);
    return std::as_writable_bytes(std::span(bytes)).subspan(head.offset, length);
  };
  handlers.failed = [c](const std::string &reason) {
    std::lock_guard g(c->mu_);
    if (!c->failure_) c->failure_ = reason;
    c->changed_.notify_all();
  };
  rig::net::ClientChannel::Options options;
  options.hello = "rigd test";
  auto channel = rig::net::ClientChannel::connect(address, key.value(), options, std::move(handlers));
  if (!channel) {
    *why = channel.error().message;
    return nullptr;
  }
  client->channel_ = std::move(channel.value());
  return client;
}

bool MachineClient::send(const wire::Message &message) {
  rig::net::UcxStatus sent = channel_->send(message);
  if (!sent.ok()) {
    std::lock_guard g(mu_);
    if (!failure_) failure_ = "the send failed: " + sent.message();
  }
  return sent.ok();
}

std::optional<MachineClient::Answer> MachineClient::request(uint32_t device, uint64_t object, wire::Operation op) {
  uint64_t number;
  {
    std::lock_guard g(mu_);
    number = next_number_++;
  }
  if (!send(wire::Request{number, device, object, op})) return std::nullopt;
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, patience, [&] { return answers_.count(number) || failure_; });
  if (!answers_.count(number)) return std::nullopt;
  return answers_[number];
}

bool MachineClient::await_report(uint32_t device, uint64_t value) {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, patience, [&] { return reported_[device] >= value || failure_; });
  return reported_[device] >= value;
}

std::string MachineClient::await_failure() {
  std::unique_lock lock(mu_);
  changed_.wait_for(lock, patience, [&] { return failure_.has_value(); });
  return failure_.value_or("");
}

std::vector<std::string> MachineClient::heard() {
  std::lock_guard g(mu_);
  return heard_;
}

std::vector<uint8_t> MachineClient::bytes_of(uint32_t device, uint64_t value, uint32_t part) {
  std::lock_guard g(mu_);
  return bytes_[{device, value, part}];
}
