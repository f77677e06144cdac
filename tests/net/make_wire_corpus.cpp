// The seeds of the fuzz target of the wire messages (fuzz/fuzz_machine_wire):
// each sample message (wire_sample_messages.hpp) encoded, in a file named
// by its place and kind.
//   make_wire_corpus DIR          writes them into DIR
//   make_wire_corpus --check DIR  exits 1, naming the file, where DIR's
//                                 files are not exactly those
#include "wire_encode.hpp"
#include "wire_sample_messages.hpp"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

// "03-request-map_peer", "10-handover".
std::string seed_name(size_t index, const wire::Message &message) {
  std::string name = wire::kind_name(static_cast<uint16_t>(wire::kind_of(message)));
  if (auto *request = std::get_if<wire::Request>(&message))
    name += std::string("-") + wire::op_name(static_cast<uint16_t>(request->op.index() + 1));
  for (char &c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string place = std::to_string(index);
  if (place.size() < 2) place.insert(place.begin(), '0');
  place += '-';
  return place + name;
}

std::map<std::string, std::vector<uint8_t>> seeds() {
  std::map<std::string, std::vector<uint8_t>> files;
  std::vector<wire::Message> messages = sample_messages();
  for (size_t i = 0; i < messages.size(); i++) {
    auto bytes = wire::encode(messages[i]);
    if (!bytes.ok()) {
      std::fprintf(stderr, "make_wire_corpus: sample %zu: %s\n", i, bytes.error().message.c_str());
      std::exit(1);
    }
    files[seed_name(i, messages[i])] = bytes.value();
  }
  return files;
}

std::vector<uint8_t> read_all(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

int main(int argc, char **argv) {
  bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check) {
    std::fprintf(stderr, "usage: make_wire_corpus [--check] DIR\n");
    return 2;
  }
  std::filesystem::path dir = argv[argc - 1];
  auto files = seeds();
  if (!check) {
    std::filesystem::create_directories(dir);
    for (const auto &[name, bytes] : files)
      std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    return 0;
  }
  size_t found = 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename();
    auto seed = files.find(name);
    if (seed == files.end() || read_all(entry.path()) != seed->second) {
      std::fprintf(stderr, "make_wire_corpus: %s is not the seed it makes; run make_wire_corpus %s\n",
                   entry.path().c_str(), dir.c_str());
      return 1;
    }
    found++;
  }
  if (found != files.size()) {
    std::fprintf(stderr, "make_wire_corpus: %s has %zu of its %zu seeds\n", dir.c_str(), found, files.size());
    return 1;
  }
  return 0;
}
