// A result of the wire codec: the value, or the reason it was refused
// (outcome.hpp).  The codec reports errors as values; no exception leaves
// it.
#pragma once

#include "outcome.hpp"

namespace rig::net::wire {

// Why a message was refused: its kind, the field and the numbers (not the
// FAILURE message, wire::Failure).
using Error = rig::net::Failure;

template <class T>
using Result = rig::net::Outcome<T>;

}  // namespace rig::net::wire
