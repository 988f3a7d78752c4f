// The buffers and layout of packed rows (packed_rows.h); the per-row calls are inline.
#include "agent/reader/packed_rows.h"

#include <algorithm>
#include <cstdlib>
#include <new>

namespace pfs::reader {

packed_rows::~packed_rows() {
  std::free(cells_);
  std::free(text_);
}

void packed_rows::set_layout(const std::vector<int>& columns, std::size_t table_columns,
                             std::size_t text_prefix) {
  table_columns_ = table_columns;
  ncolumns_ = columns.size();
  text_prefix_ = text_prefix;
  position_.assign(table_columns, -1);
  fixed_.clear();
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const auto c = static_cast<std::size_t>(columns[k]);
    if (c < table_columns) {
      position_[c] = static_cast<int>(k);
    } else {  // NULL until set_fixed
      fixed_cell f;
      f.position = k;
      fixed_.push_back(f);
    }
  }
  clear();
}

void packed_rows::set_fixed(std::size_t k, bool null, std::int64_t value, bool text, std::string_view s) {
  for (fixed_cell& f : fixed_) {
    if (f.position != k) continue;
    f.null = null;
    f.text = text;
    f.s = s;
    f.cell = null ? packed_cell{} : packed_cell{value, 0, false};
  }
}

void packed_rows::reserve(std::size_t bytes) {
  constexpr std::size_t kCellSlack = 64 * 128;  // a pause is asked for every 64 records
  grow_cells(std::min(bytes, kMaxReserve) / sizeof(packed_cell) + kCellSlack);
}

void packed_rows::grow_cells(std::size_t n) {
  if (n <= cells_cap_) return;
  n = std::max(n, cells_cap_ * 2);
  auto* c = static_cast<packed_cell*>(std::realloc(cells_, n * sizeof(packed_cell)));
  if (c == nullptr) throw std::bad_alloc();
  cells_ = c;
  cells_cap_ = n;
}

void packed_rows::grow_text(std::size_t n) {
  std::size_t c = text_cap_ == 0 ? 4096 : text_cap_ * 2;
  while (c < used_ + n) c *= 2;
  char* p = static_cast<char*>(std::realloc(text_, c));
  if (p == nullptr) throw std::bad_alloc();
  text_ = p;
  text_cap_ = c;
}

}  // namespace pfs::reader
