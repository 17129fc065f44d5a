#include "core/fdl/repo_settings.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/paths.hpp"

#include <charconv>

namespace mirror::fdl {

std::optional<int> major_version_of(std::string_view version) noexcept {
    auto dot = version.find('.');
    std::string_view major = version.substr(0, dot);
    if (major.empty() || major.size() > 6)
        return std::nullopt;
    for (char c : major)
        if (c < '0' || c > '9')
            return std::nullopt; // from_chars alone would read "-0" as 0
    int value = 0;
    auto [end, ec] = std::from_chars(major.data(), major.data() + major.size(), value);
    if (ec != std::errc() || end != major.data() + major.size())
        return std::nullopt;
    return value;
}

result<repo_settings> parse_repo_settings(std::string_view text) {
    static constexpr std::string_view file = "fdl.json";
    auto json = parse_json(text, file);
    if (!json)
        return json.error();
    auto top = object_fields::top(*json, file);
    if (!top)
        return top.error();

    repo_settings settings;
    auto version = top->string("fdl");
    if (!version)
        return version.error();
    auto major = major_version_of(*version);
    if (!major)
        return top->fail(fdl_errc::bad_value, "fdl", "'" + *version + "' is not a version number");
    if (*major != known_major_version)
        return top->fail(fdl_errc::unknown_major_version, "fdl",
                         "major version " + std::to_string(*major) + " is not supported (this build reads " +
                             std::to_string(known_major_version) + ".x)");
    settings.fdl = std::move(*version);

    std::optional<std::string> data_dir;
    field_reader read(*top);
    if (auto ok = read.optional_string("id", settings.id).done(); !ok)
        return ok.error();
    if (settings.id && settings.id->empty())
        return top->fail(fdl_errc::bad_value, "id", "empty");
    if (auto ok = read.optional_string("data_dir", data_dir).done(); !ok)
        return ok.error();
    if (data_dir) {
        if (auto problem = data_dir_problem(*data_dir))
            return top->fail(fdl_errc::bad_path, "data_dir", "'" + *data_dir + "': " + *problem);
        settings.data_dir = std::move(*data_dir);
    }

    auto signers = top->optional_array("signers");
    if (!signers)
        return signers.error();
    for (auto const& line : **signers) {
        if (!line.is_string())
            return top->fail(fdl_errc::wrong_type, "signers", "every entry must be a string");
        settings.signers.emplace_back(line.get_string());
    }

    auto formats = top->optional_array("catalog_formats");
    if (!formats)
        return formats.error();
    for (auto const& entry : **formats) {
        if (!entry.is_object())
            return top->fail(fdl_errc::wrong_type, "catalog_formats", "every entry must be an object");
        object_fields fields(entry.get_object(), file, "catalog_formats[]");
        auto ducklake = fields.string("ducklake");
        if (!ducklake)
            return ducklake.error();
        // The format becomes a file name, catalogs/<format>.duckdb: it must be one safe segment.
        if (relative_path_problem(*ducklake) || ducklake->find('/') != std::string::npos)
            return fields.fail(fdl_errc::bad_path, "ducklake", "'" + *ducklake + "' is not a safe format name");
        std::optional<std::string> until;
        if (auto ok = field_reader(fields).optional_string("until", until).done(); !ok)
            return ok.error();
        settings.catalog_formats.push_back({std::move(*ducklake), std::move(until)});
    }
    return settings;
}

} // namespace mirror::fdl
