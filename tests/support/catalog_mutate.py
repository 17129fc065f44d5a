#!/usr/bin/env python3
"""Makes a hostile DuckDB file that DuckDB's corruption check lets through.

catalog_mutate.py IN OUT --seed N [--flips K]
    Copies the DuckDB database file IN to OUT with K bytes of its block area (offset 12288
    on; 1 by default) XORed with non-zero values, positions and values drawn from a
    splitmix64 stream seeded with N, then recomputes every checksum DuckDB 1.5 verifies on
    read, so that DuckDB decodes the flipped bytes instead of refusing the file.
    Prints how many checksums it rewrote. Exits 2 when IN is not an unencrypted DuckDB file.

The same algorithm as mutate_duckdb_file in tests/fuzz/support/duckdb_checksums.cpp (which
documents the layout and cites DuckDB's sources): a seed gives the same bytes in both.
"""

import argparse
import struct
import sys

HEADER_SIZE = 4096
BLOCK_START = 3 * HEADER_SIZE
CHECKSUM_SIZE = 8
DEFAULT_BLOCK_ALLOC_SIZE = 262144
MIN_BLOCK_ALLOC_SIZE = 16384
MAX_BLOCK_ALLOC_SIZE = 262144
MASK = (1 << 64) - 1


def checksum(data):
    """DuckDB's checksum (src/common/checksum.cpp) of the bytes `data`."""
    words = len(data) // 8
    result = 5381
    for word in struct.unpack_from(f"<{words}Q", data):
        result ^= (word * 0xBF58476D1CE4E5B9) & MASK
    tail = len(data) % 8
    if tail:
        # the end of MurmurHash64A, as DuckDB's ChecksumRemainder applies it to 1 to 7 bytes
        m, r = 0xC6A4A7935BD1E995, 47
        h = 0xE17A1465 ^ ((tail * m) & MASK)
        for i, byte in enumerate(data[8 * words:]):
            h ^= byte << (8 * i)
        h = (h * m) & MASK
        h ^= h >> r
        h = (h * m) & MASK
        h ^= h >> r
        result ^= h
    return result


def fix_checksum(file, offset, size):
    """Sets the checksum in front of file[offset:offset+size]; says whether it changed."""
    computed = checksum(memoryview(file)[offset + CHECKSUM_SIZE:offset + size])
    if struct.unpack_from("<Q", file, offset)[0] == computed:
        return False
    struct.pack_into("<Q", file, offset, computed)
    return True


def recompute_duckdb_checksums(file):
    """Rewrites every checksum DuckDB verifies in the bytearray `file`; returns how many changed."""
    if len(file) < BLOCK_START or file[8:12] != b"DUCK":
        raise ValueError("not a DuckDB database file")
    if struct.unpack_from("<Q", file, 20)[0] & 1:
        raise ValueError("encrypted DuckDB file: its checksums cannot be fixed without the key")
    rewritten = sum(fix_checksum(file, offset, HEADER_SIZE) for offset in range(0, BLOCK_START, HEADER_SIZE))
    h1, h2 = HEADER_SIZE, 2 * HEADER_SIZE
    active = h1 if struct.unpack_from("<Q", file, h1 + 8)[0] > struct.unpack_from("<Q", file, h2 + 8)[0] else h2
    block_alloc_size = struct.unpack_from("<Q", file, active + 40)[0] or DEFAULT_BLOCK_ALLOC_SIZE
    if not MIN_BLOCK_ALLOC_SIZE <= block_alloc_size <= MAX_BLOCK_ALLOC_SIZE or block_alloc_size & (block_alloc_size - 1):
        raise ValueError("DuckDB file with an invalid block size")
    offset = BLOCK_START
    while len(file) - offset >= block_alloc_size:
        rewritten += fix_checksum(file, offset, block_alloc_size)
        offset += block_alloc_size
    return rewritten


def splitmix64(seed):
    state = seed & MASK
    while True:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        yield z ^ (z >> 31)


def mutate_duckdb_file(file, seed, flips):
    """Flips `flips` bytes of the block area of the bytearray `file`, then recomputes its checksums."""
    if len(file) <= BLOCK_START:
        raise ValueError("DuckDB file without blocks")
    random = splitmix64(seed)
    area = len(file) - BLOCK_START
    for _ in range(flips):
        position = BLOCK_START + next(random) % area
        file[position] ^= 1 + next(random) % 255  # never 0: always a change
    return recompute_duckdb_checksums(file)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--flips", type=int, default=1)
    args = parser.parse_args()
    with open(args.input, "rb") as f:
        file = bytearray(f.read())
    try:
        rewritten = mutate_duckdb_file(file, args.seed, args.flips)
    except ValueError as error:
        print(f"catalog_mutate.py: {args.input}: {error}", file=sys.stderr)
        return 2
    with open(args.output, "wb") as f:
        f.write(file)
    print(rewritten)
    return 0


if __name__ == "__main__":
    sys.exit(main())
