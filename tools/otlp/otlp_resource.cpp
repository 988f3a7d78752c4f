#include "tools/otlp/otlp_resource.h"

#include <unistd.h>

namespace pfs::otlp {

resource make_resource(const options& o, const region_identity& region) {
  resource r;
  std::string service = o.service_name;
  for (const auto& [k, v] : o.resource_attrs)
    if (k == "service.name" && service.empty()) service = v;
  if (service.empty()) service = region.program.empty() ? "unknown_service" : region.program;
  r.attrs.push_back(text_attribute("service.name", service));
  r.attrs.push_back(int_attribute("process.pid", static_cast<std::int64_t>(region.pid)));
  if (!region.program.empty()) r.attrs.push_back(text_attribute("process.executable.name", region.program));
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) r.attrs.push_back(text_attribute("host.name", host));
  for (const auto& [k, v] : o.resource_attrs) {
    if (k == "service.name" || k == "process.pid" || k == "host.name") continue;
    r.attrs.push_back(text_attribute(k, v));
  }
  return r;
}

}  // namespace pfs::otlp
