// fdl-bench-sshsig: how long the publish gate takes to decide one signature, in process,
// as sync and verify decide it (check_version_signature: dearmor, parse, the cryptographic
// check, the allowed_signers lines). bench/signature_bench.sh sets it beside spawning
// `ssh-keygen -Y verify` for the same signature.
//
//   fdl-bench-sshsig ALLOWED_SIGNERS NAMESPACE SIGNATURE MESSAGE SECONDS
//
// Prints "ITERATIONS MICROSECONDS_PER_SIGNATURE"; exits 1 when the signature is not
// accepted (a benchmark of a refusal would measure something else).

#include "verify/signature_policy.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>

namespace {

std::string read_file(char const* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "fdl-bench-sshsig: cannot read %s\n", path);
        std::exit(2);
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: fdl-bench-sshsig ALLOWED_SIGNERS NAMESPACE SIGNATURE MESSAGE SECONDS\n");
        return 2;
    }
    using namespace mirror::verify;
    auto signers = parse_allowed_signers(read_file(argv[1]), argv[1]);
    if (!signers) {
        std::fprintf(stderr, "fdl-bench-sshsig: %s\n", signers.error().message.c_str());
        return 2;
    }
    trust_settings trust{signature_policy::required, std::move(*signers), argv[2]};
    std::string const armored = read_file(argv[3]);
    std::string const message = read_file(argv[4]);
    double const seconds = std::atof(argv[5]);
    auto const now = static_cast<std::int64_t>(std::time(nullptr));

    using clock = std::chrono::steady_clock;
    auto const start = clock::now();
    auto const until = start + std::chrono::duration<double>(seconds);
    long iterations = 0;
    do {
        auto verdict = check_version_signature(trust, message, std::string_view(armored), now);
        if (!verdict || !*verdict) {
            std::fprintf(stderr, "fdl-bench-sshsig: not accepted: %s\n",
                         verdict ? "no signature" : verdict.error().message.c_str());
            return 1;
        }
        ++iterations;
    } while (clock::now() < until);
    double const elapsed = std::chrono::duration<double>(clock::now() - start).count();
    std::printf("%ld %.1f\n", iterations, elapsed * 1e6 / static_cast<double>(iterations));
    return 0;
}
