// setup_meters ENABLED and FREQUENCY, as SQL changes them (MySQL 8.4: both
// updatable). The program's meter thread reads them at every tick.
#include <cstring>

#include "agent/region/meter_layout.h"
#include "agent/region/setup.h"

namespace pfs::setup {

using namespace pfs::layout;

std::uint32_t find_meter(const region_map& region, std::string_view name) {
  const auto* meters = region.array<meter_record>(kArrayMeters);
  for (std::uint64_t i = 0; meters != nullptr && i < region.count(kArrayMeters); ++i) {
    const meter_record& r = meters[i];
    if ((load_acquire(r.lock) & kStateMask) != kStateAllocated) continue;
    if (name.size() < kMeterNameLen && std::string_view(r.name, strnlen(r.name, kMeterNameLen)) == name)
      return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

bool set_meter(const region_map& region, std::uint32_t meter_index, int enabled, std::int64_t frequency) {
  auto* meters = region.array<meter_record>(kArrayMeters);
  if (meters == nullptr || meter_index == 0 || meter_index > region.count(kArrayMeters)) return false;
  meter_record& r = meters[meter_index - 1];
  if ((load_acquire(r.lock) & kStateMask) != kStateAllocated) return false;
  if (frequency >= 0 && (frequency < kMinMeterFrequency || frequency > kMaxMeterFrequency)) return false;
  if (enabled >= 0) store_relaxed(r.enabled, static_cast<std::uint8_t>(enabled ? 1 : 0));
  if (frequency >= 0) store_relaxed(r.frequency, static_cast<std::uint32_t>(frequency));
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
  return true;
}

}  // namespace pfs::setup
