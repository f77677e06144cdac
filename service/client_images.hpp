// The images rigd holds for one client, loaded on the client's instances
// of the served devices, their functions by id, and the submissions that
// run the client's launches (one per function and layout of refs, made
// once).  All on the client's poller thread but the counts of loaded()
// (rigd's monitoring request), which any thread reads.
#pragma once

#include "client_objects.hpp"
#include "protocol.h"
#include "served.hpp"

#include <rig/rig.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace rigd {

// What rigd's clients hold loaded on a served device's instances.
struct LoadedCount {
  int64_t images = 0;
  int64_t bytes = 0;
};
// Of served device `served`, every client of this process together.
LoadedCount loaded(size_t served);

class ClientImages {
 public:
  // host_code: whether rigd loads the client's host code (a sim's images;
  // rigd's host_code = allow).  Images count in objects' quota.
  ClientImages(ClientObjects &objects, bool host_code) noexcept : objects_(objects), host_code_(host_code) {}
  // The client is another machine's, whose host code has nowhere else to
  // run: its images on the machine's host load on rigd's host, where
  // host_code allows it, and their launches run there.
  void serve_remote_client() noexcept { remote_ = true; }
  // Lets go of every image: rig unloads each once no work runs it.
  ~ClientImages();
  ClientImages(const ClientImages &) = delete;
  ClientImages &operator=(const ClientImages &) = delete;

  // Loads bytes on instance, of the served device record describes: RIG_OK
  // and the image's id in *id, or why it does not (RIG_EIMAGE where the
  // device refuses the bytes or rigd loads no code of the device's,
  // RIG_ENOMEM past the quota, with the bytes in *short_bytes).  The
  // caller counted bytes.size() of Held::image_bytes before it copied them;
  // a loaded image gives them back as it goes.
  rig_status_t load(const std::shared_ptr<Instance> &instance, const rig_proxy_device_record &record,
                    std::span<const std::byte> bytes, uint64_t *id, std::string *why, uint64_t *short_bytes);
  // rig_image_prepare of the image's function name; false for no such image.
  bool prepare(uint64_t image, const std::string &name);

  struct Resolved {
    uint64_t function = 0;  // 0: the image has no such function
    int64_t max_threads = 0;
    bool places_address = false;  // an entry ref of it places an address
  };
  // rig_image_resolve of the image's function name: a function keeps its id.
  // RIG_EINVAL, why in *why, for no such image or a function the device
  // cannot run; RIG_ENOMEM, with *short_bytes, as rig answers it.
  rig_status_t resolve(uint64_t image, const std::string &name, Resolved *out, std::string *why);
  // Lets go of the image, its functions and the submissions that launch
  // them; false for no such image.
  bool unload(uint64_t image);

  struct Function {
    rig_function_t *function;
    const Instance *instance;  // where it runs
    uint64_t image;
    int64_t max_threads;
    bool places_address;
  };
  // The client's function of that id, or NULL.
  const Function *function(uint64_t id) const;

  // The layout of a launch's refs that a submission of rigd's is made for:
  // per ref its rig_ref_kind_t, at, access and (entry refs) function id.
  struct RefLayout {
    uint32_t kind;
    uint32_t access;
    uint64_t at;
    uint64_t function;
  };
  // A new reference to the submission of one launch of function over refs
  // (the memory refs in order as slots 0, 1, ...), with param_bytes bytes
  // of parameters; made once per layout.  NULL where rig refuses it (why in
  // rig_last_error) or an entry ref names no function of the client's on
  // the same instance.
  rig_submission_t *launch(uint64_t function, std::span<const RefLayout> refs, uint32_t param_bytes);

 private:
  struct Image {
    rig_image_t *image;
    int64_t bytes;
    size_t served;
    std::shared_ptr<Instance> instance;
    std::map<std::string, uint64_t, std::less<>> functions;  // by name: ids
  };
  struct Launch {
    rig_submission_t *submission;
    std::vector<uint64_t> images;  // those whose functions it launches
  };
  // A client that makes this many layouts makes its submissions anew.
  static constexpr size_t most_launches = 1024;
  void release(Image &image) noexcept;
  void drop_launches(uint64_t image) noexcept;

  ClientObjects &objects_;
  bool host_code_;
  bool remote_ = false;
  uint64_t next_ = 1;  // ids of images and functions; 0 names nothing
  std::unordered_map<uint64_t, Image> images_;
  std::unordered_map<uint64_t, Function> functions_;
  std::map<std::vector<uint64_t>, Launch> launches_;  // by key: the layout
  std::vector<uint64_t> key_;                         // launch's scratch
};

}  // namespace rigd
