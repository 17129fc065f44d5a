#pragma once
// Makes hostile DuckDB files that get past DuckDB's own corruption check: DuckDB 1.5 keeps an
// 8-byte checksum in front of each header and block and refuses a file whose checksums do not
// match, so random byte flips alone only ever test that check. Flipping bytes and then
// recomputing the checksums reaches the code that decodes blocks, where a crash would be.
// tests/support/catalog_mutate.py is the same algorithm in Python: a seed gives the same bytes.
//
// Layout (DuckDB's v1.5 branch: src/storage/single_file_block_manager.cpp, ChecksumAndWrite and
// ReadAndChecksum; src/include/duckdb/storage/storage_info.hpp; the checksum in src/common/checksum.cpp):
//   [0, 4096)       main header: checksum, "DUCK", storage version, flags, versions, ids
//   [4096, 8192)    database header 1: checksum, iteration, meta block, free list, block count,
//   [8192, 12288)   database header 2:   block allocation size, vector size, compatibility
//   [12288, ...)    blocks of the active header's allocation size (256 KiB by default)
// Each header and block starts with its checksum (little-endian u64) of all its other bytes.
// The block header size (8) is not in the file: only an encrypted file (flag bit 0) has 40-byte
// block headers, its checksum inside the encrypted part; such files are refused here.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace mirror::test {

/// DuckDB's checksum of `bytes` (src/common/checksum.cpp), bit for bit.
std::uint64_t duckdb_checksum(std::span<std::uint8_t const> bytes);

/// Rewrites every checksum DuckDB 1.5 verifies when it reads `file` (a whole database file):
/// the main header's, both database headers' and every whole block's after them, the block
/// size taken from the active database header (the one with the higher iteration). A partial
/// block at the end is left as it is. Returns how many stored checksums changed.
/// Throws std::invalid_argument when `file` is not an unencrypted DuckDB file with a valid
/// block size: an encrypted file's checksums are under its encryption, out of reach without
/// the key.
std::size_t recompute_duckdb_checksums(std::span<std::uint8_t> file);

/// Flips `flips` bytes of the block area of `file` (from offset 12288 on, the headers kept
/// intact), each XORed with a non-zero value, positions and values drawn from a splitmix64
/// stream seeded with `seed` (the same seed gives the same file; a position may come twice),
/// then recomputes the checksums. Throws std::invalid_argument as recompute_duckdb_checksums
/// does, and when the file has no block area.
void mutate_duckdb_file(std::vector<std::uint8_t>& file, std::uint64_t seed, std::size_t flips);

} // namespace mirror::test
