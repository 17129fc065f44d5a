#include "tests/fuzz/support/duckdb_checksums.hpp"

#include <stdexcept>
#include <string_view>

namespace mirror::test {

namespace {

// Offsets and sizes of DuckDB 1.5's single-file format (src/include/duckdb/storage/storage_info.hpp,
// src/include/duckdb/storage/single_file_block_manager.hpp: Storage::FILE_HEADER_SIZE, BLOCK_START).
constexpr std::size_t header_size = 4096;            // each of the three headers
constexpr std::size_t block_start = 3 * header_size; // the first block
constexpr std::size_t checksum_size = 8;             // Storage::DEFAULT_BLOCK_HEADER_SIZE
constexpr std::uint64_t default_block_alloc_size = 262144;
constexpr std::uint64_t min_block_alloc_size = 16384;
constexpr std::uint64_t max_block_alloc_size = 262144;
// MainHeader: checksum, "DUCK", version number, then flags[0], whose bit 0 marks an encrypted file.
constexpr std::size_t magic_offset = 8;
constexpr std::size_t flags_offset = 20;
// DatabaseHeader, after the checksum: iteration, meta_block, free_list, block_count, block_alloc_size.
constexpr std::size_t iteration_offset = 8;
constexpr std::size_t block_alloc_size_offset = 40;

std::uint64_t load_u64(std::uint8_t const* p) {
    // DuckDB stores u64s as the machine has them: little-endian on every platform it ships for.
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i) {
        value = (value << 8) | p[i];
    }
    return value;
}

void store_u64(std::uint8_t* p, std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
        p[i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
}

// The tail hash for the last 1 to 7 bytes: the end of MurmurHash64A, as ChecksumRemainder in
// src/common/checksum.cpp applies it (its whole-word loop never runs for fewer than 8 bytes).
std::uint64_t checksum_tail(std::uint8_t const* p, std::size_t length) {
    constexpr std::uint64_t m = 0xc6a4a7935bd1e995ULL;
    constexpr std::uint64_t seed = 0xe17a1465ULL;
    constexpr unsigned r = 47;
    std::uint64_t h = seed ^ (length * m);
    for (std::size_t i = 0; i < length; ++i) {
        h ^= static_cast<std::uint64_t>(p[i]) << (8 * i);
    }
    h *= m;
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

// Sets the checksum in front of the `size` bytes at `p`; says whether it changed.
bool fix_checksum(std::uint8_t* p, std::size_t size) {
    auto const computed = duckdb_checksum({p + checksum_size, size - checksum_size});
    if (load_u64(p) == computed) {
        return false;
    }
    store_u64(p, computed);
    return true;
}

// splitmix64: tiny, and easy to write the same way in Python.
std::uint64_t next_random(std::uint64_t& state) {
    state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

} // namespace

std::uint64_t duckdb_checksum(std::span<std::uint8_t const> bytes) {
    std::uint64_t result = 5381;
    std::size_t const words = bytes.size() / 8;
    for (std::size_t i = 0; i < words; ++i) {
        result ^= load_u64(bytes.data() + 8 * i) * 0xbf58476d1ce4e5b9ULL;
    }
    if (auto const tail = bytes.size() % 8; tail != 0) {
        result ^= checksum_tail(bytes.data() + 8 * words, tail);
    }
    return result;
}

std::size_t recompute_duckdb_checksums(std::span<std::uint8_t> file) {
    if (file.size() < block_start ||
        std::string_view(reinterpret_cast<char const*>(file.data()) + magic_offset, 4) != "DUCK") {
        throw std::invalid_argument("not a DuckDB database file");
    }
    if (load_u64(file.data() + flags_offset) & 1) {
        // Blocks and database headers are checksummed before encryption (40-byte block headers).
        throw std::invalid_argument("encrypted DuckDB file: its checksums cannot be fixed without the key");
    }
    std::size_t rewritten = 0;
    for (std::size_t offset = 0; offset < block_start; offset += header_size) {
        rewritten += fix_checksum(file.data() + offset, header_size);
    }

    // DuckDB reads the block size from the database header with the higher iteration, h2 on a tie.
    auto const* h1 = file.data() + header_size;
    auto const* h2 = file.data() + 2 * header_size;
    auto const* active = load_u64(h1 + iteration_offset) > load_u64(h2 + iteration_offset) ? h1 : h2;
    auto block_alloc_size = load_u64(active + block_alloc_size_offset);
    if (block_alloc_size == 0) {
        block_alloc_size = default_block_alloc_size; // files older than the field
    }
    if (block_alloc_size < min_block_alloc_size || block_alloc_size > max_block_alloc_size ||
        (block_alloc_size & (block_alloc_size - 1)) != 0) {
        throw std::invalid_argument("DuckDB file with an invalid block size");
    }
    for (std::size_t offset = block_start; file.size() - offset >= block_alloc_size; offset += block_alloc_size) {
        rewritten += fix_checksum(file.data() + offset, block_alloc_size);
    }
    return rewritten;
}

void mutate_duckdb_file(std::vector<std::uint8_t>& file, std::uint64_t seed, std::size_t flips) {
    if (file.size() <= block_start) {
        throw std::invalid_argument("DuckDB file without blocks");
    }
    std::uint64_t state = seed;
    std::uint64_t const area = file.size() - block_start;
    for (std::size_t i = 0; i < flips; ++i) {
        auto const position = block_start + next_random(state) % area;
        auto const mask = static_cast<std::uint8_t>(1 + next_random(state) % 255); // never 0: always a change
        file[position] ^= mask;
    }
    recompute_duckdb_checksums(file);
}

} // namespace mirror::test
