// OTLP's JSON encoding (OTLP/HTTP with Content-Type application/json): proto3's
// JSON mapping with OTLP's exceptions: trace and span ids as lower-case hex (not
// base64), 64-bit integers as decimal strings, enums as integers, lowerCamelCase keys.
#pragma once

#include <string>
#include <vector>

#include "tools/otlp/otlp_model.h"

namespace pfs::otlp {

std::string encode_traces_json(const resource& res, const std::vector<span>& spans);
std::string encode_metrics_json(const resource& res, const std::vector<metric>& metrics);

}  // namespace pfs::otlp
