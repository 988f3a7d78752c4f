// Rows packed for a consumer that makes its own values from them (the FDW's pieces):
// one 16-byte cell per output column and row, and one text buffer in which every text
// has room before it for the consumer's header (a varlena's). Buffers are reused from
// piece to piece.
//
// The wait tables' row builders write these cells straight from the records when the
// sink offers them (row_sink::packed) and no built row has to be tested: no row of
// 40-byte cell_views in between, which was about half of a filtered history_long
// scan's cost per returned row. Every other table reaches the sink's row(), which packs
// the row itself with the same calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace pfs::reader {

struct packed_cell {
  std::int64_t value = 0;  // the value; text: the offset of its block in text()
  std::uint32_t len = 0;   // text: its length in bytes (at value + text_prefix)
  bool null = true;
};

class packed_rows {
 public:
  packed_rows() = default;
  packed_rows(const packed_rows&) = delete;
  packed_rows& operator=(const packed_rows&) = delete;
  ~packed_rows();

  // Output column k shows reader column columns[k] of a table of table_columns, or,
  // from columns[k] = table_columns on, a value the same for every row of a region
  // (set_fixed). text_prefix: the bytes left free before each text.
  void set_layout(const std::vector<int>& columns, std::size_t table_columns, std::size_t text_prefix);
  // Output column k's value in every row from now on (text: copied into each row's
  // block; the view must outlive the rows made).
  void set_fixed(std::size_t k, bool null, std::int64_t value, bool text, std::string_view s);

  std::size_t table_columns() const { return table_columns_; }
  // Output position of reader column c, -1 if not shown (c < table_columns()).
  int position(std::size_t c) const { return position_[c]; }
  const int* positions() const { return position_.data(); }

  void clear() { ncells_ = used_ = nrows_ = 0; }
  // Room for a piece of `bytes` of cells without growing (growing copies every cell
  // and touches new pages).
  void reserve(std::size_t bytes);
  std::size_t bytes() const { return ncells_ * sizeof(packed_cell) + used_; }
  std::size_t rows() const { return nrows_; }
  const packed_cell* cells() const { return cells_; }
  char* text() const { return text_; }

  // A new row: its fixed cells written, the others for the caller to write (each
  // exactly once). Valid until the next begin_row.
  packed_cell* begin_row() {
    if (ncells_ + ncolumns_ > cells_cap_) grow_cells(ncells_ + ncolumns_);
    packed_cell* cells = cells_ + ncells_;
    ncells_ += ncolumns_;
    ++nrows_;
    for (const fixed_cell& f : fixed_) cells[f.position] = f.text && !f.null ? text_cell(f.s) : f.cell;
    return cells;
  }
  // A text value: s copied into a new block.
  packed_cell text_cell(std::string_view s) {
    const std::size_t at = reserve_text(align8(text_prefix_ + s.size()));
    if (!s.empty()) std::memcpy(text_ + at + text_prefix_, s.data(), s.size());
    return packed_cell{static_cast<std::int64_t>(at), static_cast<std::uint32_t>(s.size()), false};
  }
  // n more bytes of text (a whole block, prefix included); the offset where they go.
  std::size_t reserve_text(std::size_t n) {
    if (used_ + n > text_cap_) grow_text(n);
    const std::size_t at = used_;
    used_ += n;
    return at;
  }
  std::size_t text_prefix() const { return text_prefix_; }
  static constexpr std::size_t align8(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

  // The largest piece reserve() prepares for: a consumer keeps no larger buffers.
  static constexpr std::size_t kMaxReserve = 64u << 20;

 private:
  struct fixed_cell {
    std::size_t position = 0;
    packed_cell cell;  // not text
    bool text = false, null = true;
    std::string_view s;
  };
  [[gnu::noinline]] void grow_cells(std::size_t n);
  [[gnu::noinline]] void grow_text(std::size_t n);

  packed_cell* cells_ = nullptr;  // malloc'd: grows by realloc (cells are plain data)
  std::size_t ncells_ = 0, cells_cap_ = 0, nrows_ = 0;
  char* text_ = nullptr;  // malloc'd: grows by realloc
  std::size_t used_ = 0, text_cap_ = 0;
  std::size_t table_columns_ = 0, ncolumns_ = 0, text_prefix_ = 0;
  std::vector<int> position_;  // per reader column
  std::vector<fixed_cell> fixed_;
};

}  // namespace pfs::reader
