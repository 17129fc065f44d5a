// The test programs' main: doctest's, after a look at whether this run is a catalog reader
// that a test's sandboxed_reader started (core/catalog/catalog_worker.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include "core/catalog/catalog_worker.hpp"

#include <doctest/doctest.h>

int main(int argc, char** argv) {
    if (auto served = mirror::catalog::serve_catalog_worker_if_asked(argc, argv))
        return *served;
    return doctest::Context(argc, argv).run();
}
