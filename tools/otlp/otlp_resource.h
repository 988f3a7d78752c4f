// The OTLP resource of a region: service.name (OTEL_SERVICE_NAME or --service-name,
// else service.name of the resource attributes, else the program's name), process.pid,
// process.executable.name, host.name, and the user's resource attributes.
#pragma once

#include "tools/otlp/otlp_events.h"
#include "tools/otlp/otlp_model.h"
#include "tools/otlp/otlp_options.h"

namespace pfs::otlp {

resource make_resource(const options& o, const region_identity& region);

}  // namespace pfs::otlp
