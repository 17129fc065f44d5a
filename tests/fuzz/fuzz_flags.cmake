# Flags of the fuzz build (FDL_MIRROR_FUZZ, docs/fuzzing.md), set for every file.
#
# Every library is compiled with libFuzzer's coverage instrumentation (fuzzer-no-link) and
# with AddressSanitizer and UndefinedBehaviorSanitizer; only the targets link libFuzzer's
# main (tests/fuzz/CMakeLists.txt). UBSan stops at its first report, so libFuzzer sees it
# as a crash and keeps the input.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "FDL_MIRROR_FUZZ needs clang (libFuzzer is part of clang's runtime): "
    "configure with -DCMAKE_CXX_COMPILER=clang++-14, as scripts/fuzz does")
endif()

add_compile_options(
  -fsanitize=fuzzer-no-link,address,undefined
  -fno-sanitize-recover=undefined
  # clang 14 cannot emit -fsanitize=function's prologue data for a coroutine's split
  # functions once coverage is on ("error: Cannot represent a difference across
  # sections"), and the client and the stores are coroutines. The check it would add
  # (calls through a function pointer of another type) does not concern a parser.
  -fno-sanitize=function
  -fno-omit-frame-pointer
  # The top CMakeLists.txt names a GCC-only warning (-Wno-mismatched-new-delete).
  -Wno-unknown-warning-option)
add_link_options(-fsanitize=address,undefined)

# Whatever the build type: -O1 (libFuzzer's advice: fast enough, still debuggable), line
# tables for the sanitizers' stack traces, and no NDEBUG, since a failed assertion (ours or
# Boost's) is a finding.
string(TOUPPER "${CMAKE_BUILD_TYPE}" fuzz_build_type)
set(CMAKE_CXX_FLAGS_${fuzz_build_type} "-O1 -gline-tables-only")
