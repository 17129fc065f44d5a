// libFuzzer target: the checks every name from a repository passes before it is used
// (core/fdl/paths.hpp, ids.hpp, refs.hpp): relative paths, data_dir, ref names, version
// ids, ref files and HEAD. The input is one name. Besides the sanitizers, it holds what is
// accepted to properties the checks exist for, checked another way: an accepted path
// stays below its folder and is already in normal form; UTF-8 validity agrees with
// Boost.JSON's validator; a ref file or HEAD that parses names only what the checks accept.

#include "core/fdl/ids.hpp"
#include "core/fdl/paths.hpp"
#include "core/fdl/ref_patterns.hpp"
#include "core/fdl/refs.hpp"
#include "core/fdl/repo_settings.hpp"
#include "tests/fuzz/support/check.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/parse_options.hpp>

#include <filesystem>

using namespace mirror::fdl;
using mirror::fuzz::check;

namespace {

void check_path(std::string_view path) {
    if (relative_path_problem(path))
        return;
    // Accepted: it must be safe to append to a folder, which is why the check exists.
    std::filesystem::path const root = "/srv/repo";
    std::filesystem::path const p{std::string(path)};
    check(p.is_relative(), "an accepted path is not relative", path);
    check(p.lexically_normal() == p, "an accepted path is not in normal form", path);
    auto joined = (root / p).lexically_normal();
    check(joined.string().starts_with("/srv/repo/"), "an accepted path leaves its folder", path);
    check(joined.lexically_relative(root) == p, "an accepted path names another file below its folder", path);
    check(is_valid_utf8(path), "an accepted path is not UTF-8", path);
    // data_dir is a path and a final slash.
    check(!data_dir_problem(std::string(path) + "/"), "an accepted path refused as a data_dir", path);
}

void check_data_dir(std::string_view dir) {
    if (data_dir_problem(dir))
        return;
    check(dir.ends_with('/'), "an accepted data_dir does not end in '/'", dir);
    check(!relative_path_problem(dir.substr(0, dir.size() - 1)), "an accepted data_dir's folder is refused", dir);
}

void check_ref_name(std::string_view name) {
    bool accepted = !ref_name_problem(name);
    auto head = parse_head("ref: " + std::string(name) + "\n");
    // HEAD names a ref only when the name passes and is one a mirror copies.
    check(head.has_value() == (accepted && is_mirrored_ref(name)), "HEAD and ref_name_problem disagree", name);
    if (!accepted)
        return;
    check(name.find("..") == std::string_view::npos && name.find("//") == std::string_view::npos,
          "an accepted ref name with '..' or '//'", name);
    check(name.find('/') != std::string_view::npos && !name.starts_with('/') && !name.ends_with('/'),
          "an accepted ref name is not two components or more", name);
    check(is_valid_utf8(name), "an accepted ref name is not UTF-8", name);
}

/// A ref pattern: accepted only under refs/; without wildcards, a ref name that matches
/// itself. Matching a hostile pattern against itself must also end (the fuzzer's timeout).
void check_ref_pattern(std::string_view text) {
    auto parsed = ref_pattern::parse(text);
    if (!parsed)
        return;
    check(text.starts_with("refs/"), "a ref pattern accepted outside refs/", text);
    bool const matches_itself = parsed->matches(text);
    if (text.find_first_of("*?") == std::string_view::npos) {
        check(!ref_name_problem(text), "a ref pattern without wildcards that is no ref name", text);
        check(matches_itself, "a ref pattern without wildcards does not match itself", text);
    }
}

void check_ids(std::string_view text) {
    if (is_version_id(text)) {
        check(is_lower_uuid(text), "a version id that is not a lower-case UUID", text);
        auto read = parse_ref_file(render_ref_file(text), "refs/heads/x");
        check(read.has_value() && *read == text, "a rendered ref file does not read back", text);
    }
    auto ref = parse_ref_file(text, "refs/heads/x");
    if (ref)
        check(is_version_id(*ref), "a ref file read as something not a version id", text);
    auto head = parse_head(text);
    if (head) {
        check(head->symbolic.has_value() != head->detached.has_value(), "HEAD both symbolic and detached", text);
        if (head->symbolic)
            check(!ref_name_problem(*head->symbolic) && is_mirrored_ref(*head->symbolic),
                  "HEAD names a ref the checks refuse", text);
        if (head->detached)
            check(is_version_id(*head->detached), "a detached HEAD is not a version id", text);
    }
    if (auto major = major_version_of(text))
        check(*major >= 0, "a negative major version", text);
}

/// is_valid_utf8 against Boost.JSON's validator, on text that is valid JSON string
/// content in every other respect (no quote, backslash or control character).
void check_utf8(std::string_view text) {
    for (char c : text)
        if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20)
            return;
    boost::json::parse_options options;
    options.allow_invalid_utf8 = false;
    boost::system::error_code ec;
    boost::json::parse("\"" + std::string(text) + "\"", ec, {}, options);
    check(is_valid_utf8(text) == !ec, "is_valid_utf8 and Boost.JSON disagree", text);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(unsigned char const* data, std::size_t size) {
    auto text = mirror::fuzz::as_text(data, size);
    check_path(text);
    check_data_dir(text);
    check_ref_name(text);
    check_ref_pattern(text);
    check_ids(text);
    check_utf8(text);
    return 0;
}
