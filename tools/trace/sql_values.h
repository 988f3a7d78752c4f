// The values of one trace line, `INSERT INTO events_waits_current VALUES (...);`
// (agent/provider/agent_trace.cpp writes them): numbers, NULL, '...' with quotes
// doubled, and E'...' with backslash escapes (\\, \xHH), unescaped.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pfs::trace {

using sql_value = std::optional<std::string>;  // nullopt: NULL

// False when the line is not an INSERT ... VALUES (...) with well-formed values.
bool parse_insert_values(const std::string& line, std::vector<sql_value>& out);

}  // namespace pfs::trace
