#include "core/fdl/version_record.hpp"

#include "core/fdl/json_fields.hpp"
#include "core/fdl/ids.hpp"
#include "core/fdl/paths.hpp"
#include "core/fdl/repo_settings.hpp"

namespace mirror::fdl {

std::optional<std::string> version_record::first_parent() const {
    if (parents.empty())
        return std::nullopt;
    return parents.front();
}

static result<std::optional<pinned_file>> read_pinned(object_fields const& top, std::string_view key) {
    auto block = top.optional_child(key);
    if (!block)
        return block.error();
    if (!*block)
        return std::optional<pinned_file>();
    auto const& fields = **block;
    pinned_file pinned;
    auto path = fields.string("path");
    if (!path)
        return path.error();
    if (auto problem = relative_path_problem(*path))
        return fields.fail(fdl_errc::bad_path, "path", "'" + *path + "': " + *problem);
    // version.json and its signature are not files that version.json can pin.
    if (*path == "version.json" || *path == "version.json.sig")
        return fields.fail(fdl_errc::bad_path, "path", "'" + *path + "' is the record itself");
    pinned.path = std::move(*path);
    std::string digest_text;
    field_reader read(fields);
    if (auto ok = read.count("bytes", pinned.bytes).string("sha256", digest_text).done(); !ok)
        return ok.error();
    auto digest = verify::parse_sha256_hex(digest_text);
    if (!digest)
        return fields.fail(fdl_errc::bad_value, "sha256", "not 64 lower-case hex digits");
    pinned.sha256 = *digest;
    return std::optional<pinned_file>(std::move(pinned));
}

static result<std::optional<ducklake_block>> read_ducklake(object_fields const& top) {
    auto block = top.optional_child("ducklake");
    if (!block)
        return block.error();
    if (!*block)
        return std::optional<ducklake_block>();
    auto const& fields = **block;
    ducklake_block out;
    field_reader read(fields);
    if (auto ok = read.string("format", out.format).count("snapshot_id", out.snapshot_id).done(); !ok)
        return ok.error();
    auto snapshots = fields.optional_array("snapshots");
    if (!snapshots)
        return snapshots.error();
    for (auto const& s : **snapshots) {
        auto n = as_count(s);
        if (!n)
            return fields.fail(fdl_errc::bad_value, "snapshots", "every entry must be a non-negative integer");
        out.snapshots.push_back(*n);
    }
    return std::optional<ducklake_block>(std::move(out));
}

result<version_record> parse_version_record(std::string_view text, std::string_view file) {
    auto json = parse_json(text, file);
    if (!json)
        return json.error();
    auto top = object_fields::top(*json, file);
    if (!top)
        return top.error();

    auto version = top->string("fdl");
    if (!version)
        return version.error();
    auto major = major_version_of(*version);
    if (!major)
        return top->fail(fdl_errc::bad_value, "fdl", "'" + *version + "' is not a version number");
    if (*major != known_major_version)
        return top->fail(fdl_errc::unknown_major_version, "fdl",
                         "major version " + std::to_string(*major) + " is not supported");

    version_record record;
    auto id = top->string("id");
    if (!id)
        return id.error();
    if (!is_version_id(*id))
        return top->fail(fdl_errc::bad_version_id, "id", "'" + id->substr(0, 64) + "' is not a lower-case UUIDv7");
    record.id = std::move(*id);

    field_reader read(*top);
    if (auto ok = read.optional_count("seq", record.seq).done(); !ok)
        return ok.error();

    auto parents = top->optional_array("parents");
    if (!parents)
        return parents.error();
    for (auto const& parent : **parents) {
        if (!parent.is_string() || !is_version_id(parent.get_string()))
            return top->fail(fdl_errc::bad_version_id, "parents", "every entry must be a lower-case UUIDv7");
        if (parent.get_string() == record.id)
            return top->fail(fdl_errc::bad_value, "parents", "the version names itself as a parent");
        record.parents.emplace_back(parent.get_string());
    }

    if (auto ok = read.optional_string("created_at", record.created_at).done(); !ok)
        return ok.error();

    for (auto [key, slot] : {std::pair{"catalog", &record.catalog}, std::pair{"dataset", &record.dataset},
                             std::pair{"files", &record.files}}) {
        auto pinned = read_pinned(*top, key);
        if (!pinned)
            return pinned.error();
        *slot = std::move(*pinned);
    }
    auto ducklake = read_ducklake(*top);
    if (!ducklake)
        return ducklake.error();
    record.ducklake = std::move(*ducklake);

    // `extensions` is the older name of `annotations`; both must be objects when present.
    for (std::string_view key : {"annotations", "extensions"})
        if (auto block = top->optional_child(key); !block)
            return block.error();
    return record;
}

result<void> check_record_folder(version_record const& record, std::string_view folder_id, std::string_view file) {
    if (record.id != folder_id)
        return make_error(fdl_errc::id_mismatch,
                          std::string(file) + ": id: '" + record.id + "' does not match its folder '" +
                              std::string(folder_id) + "'");
    return {};
}

} // namespace mirror::fdl
