// CRC-32C (Castagnoli), the checksum OP_MSG carries when its checksumPresent flag is set
// (docs/mongodb-behaviour.md, OP_MSG). A table-driven software implementation: messages with
// checksums are rare (no supported driver sends them), so simplicity beats speed here.
//
// Pure function; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mongosim::server {

uint32_t crc32c(const uint8_t* data, size_t size);

}  // namespace mongosim::server
