// The header of a safetensors file (safetensors_header.hpp).
#include "safetensors_header.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace rig::io {

namespace {

using json = nlohmann::json;

[[noreturn]] void wrong(const std::string &why) { throw std::runtime_error(why); }

// A JSON number that is a count or an offset: an integer in [0, 2^63).
int64_t count_of(const json &v, const std::string &what) {
  if (v.is_number_unsigned()) {
    auto n = v.get<uint64_t>();
    if (n > static_cast<uint64_t>(INT64_MAX)) wrong(what + " is past 2^63 - 1");
    return static_cast<int64_t>(n);
  }
  if (v.is_number_integer()) {
    auto n = v.get<int64_t>();
    if (n < 0) wrong(what + " is negative: " + std::to_string(n));
    return n;
  }
  wrong(what + " is not an integer");
}

TensorHeader tensor_of(const std::string &name, const json &t) {
  std::string where = "tensor \"" + name + "\"";
  if (!t.is_object()) wrong(where + " is not an object");
  TensorHeader h;
  h.name = name;
  auto dtype = t.find("dtype"), shape = t.find("shape"), offsets = t.find("data_offsets");
  if (dtype == t.end() || !dtype->is_string()) wrong(where + " has no dtype string");
  h.dtype = dtype->get<std::string>();
  int64_t element = safetensors_dtype_bytes(h.dtype);
  if (element == 0) wrong(where + " has the unknown dtype " + h.dtype);
  if (shape == t.end() || !shape->is_array()) wrong(where + " has no shape list");
  int64_t elements = 1;
  for (const json &size : *shape) {
    int64_t n = count_of(size, where + "'s shape");
    h.shape.push_back(n);
    if (__builtin_mul_overflow(elements, n, &elements)) wrong(where + "'s shape has more than 2^63 - 1 elements");
  }
  if (offsets == t.end() || !offsets->is_array() || offsets->size() != 2)
    wrong(where + " has no data_offsets [begin, end]");
  h.begin = count_of((*offsets)[0], where + "'s data_offsets");
  h.end = count_of((*offsets)[1], where + "'s data_offsets");
  if (h.begin > h.end)
    wrong(where + "'s data_offsets [" + std::to_string(h.begin) + ", " + std::to_string(h.end) + "] end before they begin");
  int64_t bytes = 0;
  if (__builtin_mul_overflow(elements, element, &bytes)) wrong(where + " has more than 2^63 - 1 bytes");
  if (h.end - h.begin != bytes)
    wrong(where + "'s data_offsets span " + std::to_string(h.end - h.begin) + " bytes, its " + h.dtype + " shape " +
          std::to_string(bytes));
  return h;
}

}  // namespace

int64_t safetensors_dtype_bytes(std::string_view dtype) {
  static const std::pair<std::string_view, int64_t> sizes[] = {
      {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
      {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8}};
  for (const auto &[name, bytes] : sizes)
    if (name == dtype) return bytes;
  return 0;
}

std::vector<TensorHeader> parse_safetensors_header(std::string_view text, int64_t data_bytes) {
  json header = json::parse(text.begin(), text.end(), nullptr, false);
  if (header.is_discarded()) wrong("its header is not JSON");
  if (!header.is_object()) wrong("its header is not a JSON object");
  std::vector<TensorHeader> tensors;
  for (const auto &[name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object()) wrong("its __metadata__ is not an object");
      for (const auto &[key, text_value] : value.items())
        if (!text_value.is_string()) wrong("its __metadata__'s " + key + " is not a string");
      continue;
    }
    tensors.push_back(tensor_of(name, value));
  }
  // The bytes of the tensors follow each other from the data's byte 0 to
  // its end, with no gap and no overlap (empty tensors anywhere).
  std::stable_sort(tensors.begin(), tensors.end(), [](const TensorHeader &a, const TensorHeader &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  int64_t next = 0;
  for (const TensorHeader &t : tensors) {
    if (t.begin != next)
      wrong("tensor \"" + t.name + "\" begins at data byte " + std::to_string(t.begin) + ", not " +
            std::to_string(next) + (t.begin < next ? ": it overlaps another" : ": a gap before it"));
    next = t.end;
  }
  if (next != data_bytes)
    wrong("its tensors span " + std::to_string(next) + " bytes of data, and the file holds " +
          std::to_string(data_bytes) + " after its header");
  return tensors;
}

}  // namespace rig::io
