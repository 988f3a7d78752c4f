// OTLP's protobuf encoding (ExportTraceServiceRequest, ExportMetricsServiceRequest),
// written from the protocol buffers wire format: varints, length-delimited fields,
// fixed64 and doubles, little-endian. The field numbers are those of
// opentelemetry/proto/{common,resource,trace,metrics,collector}/v1/*.proto.
#pragma once

#include <string>
#include <vector>

#include "tools/otlp/otlp_model.h"

namespace pfs::otlp {

std::string encode_traces_protobuf(const resource& res, const std::vector<span>& spans);
std::string encode_metrics_protobuf(const resource& res, const std::vector<metric>& metrics);

}  // namespace pfs::otlp
