#pragma once
// The few functions of DuckDB's C API that fdl-mirror uses. DuckDB's own duckdb.h is used
// where it is installed; the npm package that scripts/setup installs ships only the
// library, so otherwise these declarations stand in for it (C API of DuckDB 1.5: the
// 48-byte duckdb_result of three idx_t and three pointers, the 16-byte duckdb_string_t,
// opaque handles).

#if __has_include(<duckdb.h>)
#include <duckdb.h>
#else
#include <cstdint>

extern "C" {
typedef uint64_t idx_t;
typedef enum {
    DUCKDB_TYPE_INVALID = 0,
    DUCKDB_TYPE_BOOLEAN = 1,
    DUCKDB_TYPE_TINYINT = 2,
    DUCKDB_TYPE_SMALLINT = 3,
    DUCKDB_TYPE_INTEGER = 4,
    DUCKDB_TYPE_BIGINT = 5,
    DUCKDB_TYPE_UTINYINT = 6,
    DUCKDB_TYPE_USMALLINT = 7,
    DUCKDB_TYPE_UINTEGER = 8,
    DUCKDB_TYPE_UBIGINT = 9,
    DUCKDB_TYPE_DOUBLE = 11,
    DUCKDB_TYPE_HUGEINT = 16,
    DUCKDB_TYPE_VARCHAR = 17,
} duckdb_type;
typedef enum { DuckDBSuccess = 0, DuckDBError = 1 } duckdb_state;
typedef struct _duckdb_database { void* internal_ptr; } * duckdb_database;
typedef struct _duckdb_connection { void* internal_ptr; } * duckdb_connection;
typedef struct _duckdb_config { void* internal_ptr; } * duckdb_config;
typedef struct _duckdb_data_chunk { void* internal_ptr; } * duckdb_data_chunk;
typedef struct _duckdb_vector { void* internal_ptr; } * duckdb_vector;
typedef struct _duckdb_prepared_statement { void* internal_ptr; } * duckdb_prepared_statement;
typedef struct {
    union {
        struct {
            uint32_t length;
            char prefix[4];
            char* ptr;
        } pointer;
        struct {
            uint32_t length;
            char inlined[12];
        } inlined;
    } value;
} duckdb_string_t;
typedef struct {
    idx_t deprecated_column_count;
    idx_t deprecated_row_count;
    idx_t deprecated_rows_changed;
    void* deprecated_columns;
    char* deprecated_error_message;
    void* internal_data;
} duckdb_result;

duckdb_state duckdb_create_config(duckdb_config* out_config);
duckdb_state duckdb_set_config(duckdb_config config, const char* name, const char* option);
void duckdb_destroy_config(duckdb_config* config);
duckdb_state duckdb_open_ext(const char* path, duckdb_database* out_database, duckdb_config config, char** out_error);
void duckdb_close(duckdb_database* database);
duckdb_state duckdb_connect(duckdb_database database, duckdb_connection* out_connection);
void duckdb_disconnect(duckdb_connection* connection);
duckdb_state duckdb_query(duckdb_connection connection, const char* query, duckdb_result* out_result);
void duckdb_destroy_result(duckdb_result* result);
const char* duckdb_result_error(duckdb_result* result);
idx_t duckdb_row_count(duckdb_result* result);
idx_t duckdb_column_count(duckdb_result* result);
const char* duckdb_column_name(duckdb_result* result, idx_t col);
duckdb_type duckdb_column_type(duckdb_result* result, idx_t col);
char* duckdb_value_varchar(duckdb_result* result, idx_t col, idx_t row);
bool duckdb_value_is_null(duckdb_result* result, idx_t col, idx_t row);
void duckdb_free(void* ptr);
void duckdb_interrupt(duckdb_connection connection);
duckdb_data_chunk duckdb_fetch_chunk(duckdb_result result);
idx_t duckdb_data_chunk_get_size(duckdb_data_chunk chunk);
duckdb_vector duckdb_data_chunk_get_vector(duckdb_data_chunk chunk, idx_t col_idx);
void* duckdb_vector_get_data(duckdb_vector vector);
uint64_t* duckdb_vector_get_validity(duckdb_vector vector);
bool duckdb_validity_row_is_valid(uint64_t* validity, idx_t row);
void duckdb_destroy_data_chunk(duckdb_data_chunk* chunk);
duckdb_state duckdb_prepare(duckdb_connection connection, const char* query,
                            duckdb_prepared_statement* out_prepared_statement);
const char* duckdb_prepare_error(duckdb_prepared_statement prepared_statement);
void duckdb_destroy_prepare(duckdb_prepared_statement* prepared_statement);
duckdb_state duckdb_execute_prepared_streaming(duckdb_prepared_statement prepared_statement,
                                               duckdb_result* out_result);
}
#endif
