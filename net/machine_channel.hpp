// A connection of the link to other machines (rig-remote-proxy.txt's
// Link, rigd --listen), as both its ends use it: a UCX endpoint
// (ucx_endpoint.hpp) that has passed the authentication (auth_*.hpp) and
// carries the wire messages (wire_messages.hpp).
//
// Active messages: a wire message's id is its kind (1 to 9).  The
// authentication's messages go first, with their own ids: CHALLENGE
// (kAuthChallengeId, agent to client), PROOF (kAuthProofId) and the
// agent's ACCEPT or REFUSE (kAuthAnswerId).  A wire message before the
// ACCEPT, an authentication message after it, or bytes that do not decode
// (wire::decode, which also checks them) fail the connection with the
// reason.
//
// Framing: a message's header is empty and its data is its whole
// encoding, except BYTES: its header is its encoding up to its data (the
// data's length included, which must be the active message's data
// length), and its data the bytes, so that the client lands them where
// the GET names with no copy (ChannelHandlers::place_bytes).  A message
// the client sends may come in two pieces: its header the first bytes of
// its encoding, its data the rest (the bytes of a PUT that ends a
// HANDOVER, or of an IMAGE, sent from the caller's memory with no copy);
// the agent takes header then data as the encoding, whose bounds count
// both.  The agent's messages but BYTES have empty headers.
//
// Direction: the agent sends DEVICES, ANSWER, REPORT and BYTES, the
// client REQUEST, RELEASE, HANDOVER and CLOSE, either FAILURE; a kind
// from the wrong end, or a second DEVICES, fails the connection too.
//
// Sequence: the client connects; the agent sends CHALLENGE; the client
// sends PROOF, its hello the text the agent's log names it by; the agent
// answers ACCEPT then DEVICES, or REFUSE and closes the endpoint.
//
// Values and objects, per connection: a HANDOVER's device is the account
// id of the agent's device; a device's values start at 1 and rise by one
// (each client maps its proxy's timeline onto them); REPORT v of a device
// says that every value up to v is done, and follows every BYTES of those
// values.  The client names what a REQUEST makes (ALLOC, MAP_PEER, IMAGE,
// ENTRY) by a fresh object id above 0; RELEASE gives it back.  OPEN
// opens the client's instance of the device; its object, as every
// REQUEST's, is a fresh id above 0 (wire_check refuses object 0).  A
// HANDOVER, ALLOC or MAP_PEER for a device the client has not opened is
// refused.
// FAILURE from the agent: the job failed, with its root cause, and the
// agent closes the connection; from the client: the client gives up.
#pragma once

#include "keys.hpp"
#include "outcome.hpp"
#include "ucx_link.hpp"
#include "wire_messages.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rig::net {

inline constexpr uint16_t kAuthChallengeId = 64;
inline constexpr uint16_t kAuthProofId = 65;
inline constexpr uint16_t kAuthAnswerId = 66;

// An account of the agent's DEVICES, owned (wire::Account's texts are
// views).
struct MachineAccount {
  uint32_t id = 0;
  std::string name;
  std::string arch;
  uint64_t budget = 0;
  uint64_t cache_bytes = 0;
  std::vector<uint32_t> reach;
};

// What a client channel's owner hears, on the link's progress thread:
// none may block, and none may send (a send there fails).
struct ChannelHandlers {
  // Each wire message after DEVICES, decoded and checked; its texts and
  // data are valid during the call.  It may run before connect returns.
  std::function<void(const wire::Message &message)> message;
  // Where the length bytes of the BYTES whose fields are head (its data
  // empty; its fields checked with length as wire_check does) land: a span of at least length bytes, valid until message()
  // hears that BYTES; an empty span fails the connection ("BYTES for no
  // GET").
  std::function<std::span<std::byte>(const wire::Bytes &head, uint64_t length)> place_bytes;
  // Once: the connection failed or closed, and why (the link's message,
  // the agent's FAILURE root cause, a message that did not decode); from
  // connect's return on (a failure before it is connect's answer).
  std::function<void(const std::string &why)> failed;
};

// The client's end of a connection: an interface, all of it in this
// header, so that librig, which loads the code behind it at its first
// connection (machine_module.hpp), calls it through the object alone.
class ClientChannel {
 public:
  struct Options {
    UcxOptions ucx;
    std::string hello;  // at most kHelloMax bytes
  };

  // Connects to the agent listening at address ("HOST:PORT"), proves key
  // and waits for its DEVICES (each step within the failure bound): the
  // channel, or why not (the address and UCX's reason, the agent's
  // REFUSE reason, an ACCEPT that shows no key of ours, the root cause of
  // a FAILURE that came before connect returned).
  static Outcome<std::unique_ptr<ClientChannel>> connect(const std::string &address, const ClientKey &key,
                                                         const Options &options, ChannelHandlers handlers);
  // Sends CLOSE where the connection works and waits, up to the failure
  // bound, for the agent to close it (closing first could drop the CLOSE),
  // then closes it; the handlers hear nothing once it returns.
  virtual ~ClientChannel() = default;

  virtual const std::vector<MachineAccount> &devices() const = 0;
  virtual const std::string &address() const = 0;

  // Sends message and waits until UCX completed it (UcxEndpoint::send):
  // its bytes may be reused once it returns.  Any thread but the progress
  // thread; messages of several threads never interleave.  Fails with the
  // connection's failure once it failed; refuses, the connection intact,
  // a message that breaks the wire's rules or that only the agent sends.
  virtual UcxStatus send(const wire::Message &message) = 0;
  virtual bool failed() const = 0;
  virtual std::string failure() const = 0;

 protected:
  ClientChannel() = default;
  ClientChannel(const ClientChannel &) = delete;
  ClientChannel &operator=(const ClientChannel &) = delete;
};

// A message as the agent takes it: its bytes, owned, and the message
// decoded from them (its views point into bytes, which a move keeps).
struct ReceivedMessage {
  std::vector<uint8_t> bytes;
  wire::Message message;
};

// The agent's end of one authenticated connection.  Its owner takes the
// client's messages in order on a thread of its own (next), and answers
// with send.
class AgentConnection {
 public:
  virtual ~AgentConnection() = default;
  // The key the client proved, its hello, and "HOST:PORT" of its end.
  virtual const std::string &key_id() const = 0;
  virtual const std::string &hello() const = 0;
  virtual const std::string &peer() const = 0;
  // The client's next message, waiting up to wait for it; nullopt when
  // none came, or once the connection failed (failed() then says so) and
  // the messages that came before the failure were taken.  The agent
  // closes the connection on CLOSE (its failure: "the client closed the
  // connection"), after which next() still gives the CLOSE.
  virtual std::optional<ReceivedMessage> next(std::chrono::milliseconds wait) = 0;
  // As ClientChannel::send (refusing what only clients send); a BYTES
  // goes with its framing above.
  virtual UcxStatus send(const wire::Message &message) = 0;
  virtual bool failed() const = 0;
  virtual std::string failure() const = 0;
  // Closes the connection at once, ending the sends that wait on it
  // (such as a BYTES the client does not take); next() then answers
  // nullopt at once.
  virtual void close() = 0;
  // The bytes of a message next() gave, once the owner is done with them:
  // a later message lands in them, whose pages are mapped already (at most
  // two such blocks, of at most the queue bound in all).  Any thread, also
  // after the connection failed.
  virtual void give_back(std::vector<uint8_t> bytes) noexcept = 0;
};

// The agent's listener: authenticates each connection against a key ring
// (refusing anything else), sends it ACCEPT and DEVICES, then hands it to
// its owner.
class AgentListener {
 public:
  struct Options {
    UcxOptions ucx;
    // The most bytes of a connection's messages that the owner has not
    // taken yet (next), the one landing included: a client whose message
    // would pass it fails, so that no client grows the agent's memory
    // without bound.  A HANDOVER larger than it cannot pass.  Messages wait
    // as the bytes they came in, and are decoded as the owner takes them.
    uint64_t queue_max = uint64_t{1} << 30;
    // The most connections that prove their keys at once, over all
    // peers and from one host: past either, a new connection is refused
    // at once, so that peers without a key hold no more of the agent's
    // memory and descriptors than that, and slow ones no others' turn.
    size_t handshakes_max = 64;
    size_t handshakes_per_host = 8;
  };
  // Runs, on a thread of the listener's own (never the progress thread),
  // with each connection authenticated.
  using Accept = std::function<void(std::shared_ptr<AgentConnection> connection)>;
  // Runs likewise with each connection refused: its peer, and the cause
  // for the agent's log (auth_agent.hpp's AgentRefused::cause; "no PROOF
  // from PEER in N ms"; the reason a connection failed in its handshake;
  // "N connections from HOST prove their keys already, the most ...").
  using Refused = std::function<void(const std::string &peer, const std::string &cause)>;

  // Listens on address ("HOST:PORT", port 0 for one the system picks), or
  // answers why not.
  static Outcome<std::unique_ptr<AgentListener>> listen(const std::string &address, KeyRing ring,
                                                        std::vector<MachineAccount> devices,
                                                        const Options &options, Accept accept, Refused refused);
  // Stops accepting and closes the connections still authenticating;
  // those handed to the owner stay the owner's objects, but fail: the
  // listener's link, which carries them, goes with it.
  ~AgentListener();
  AgentListener(const AgentListener &) = delete;
  AgentListener &operator=(const AgentListener &) = delete;

  // "HOST:PORT", the port the listener got.
  const std::string &address() const;

 private:
  struct State;
  explicit AgentListener(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace rig::net
