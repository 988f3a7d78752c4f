// A scan of one table of a region with a callable per row (otlp_events.cpp,
// otlp_metrics.cpp).
#pragma once

#include <cstddef>
#include <utility>

#include "agent/reader/reader.h"

namespace pfs::otlp {

template <class F>
class lambda_sink final : public reader::row_sink {
 public:
  explicit lambda_sink(F f) : f_(std::move(f)) {}
  bool row(const reader::cell_view* cells, std::size_t) override {
    f_(cells);
    return true;
  }

 private:
  F f_;
};

// Calls f(cells) for every row of table id.
template <class F>
region_error scan(reader::region_reader& r, reader::table_id id, F f) {
  lambda_sink<F> sink(std::move(f));
  return r.scan(reader::table(id), sink);
}

}  // namespace pfs::otlp
