// Row builders of the file io and table io tables.
#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

namespace {

// file_instances (summary = false) or file_summary_by_instance (summary = true).
void file_rows(scan_state& s, bool summary) {
  s.load_classes();
  for_each_file(s, [&s, summary](const file_copy& f, const class_entry& c) {
    auto& x = s.add_row();
    x.push_back(s.text_cell(f.name.str()));
    x.push_back(s.text_cell(std::string_view(c.name)));
    if (summary) {
      x.push_back(int_cell(f.identity));
      append_io_cells(x, f.stats);
    } else {
      x.push_back(int_cell(f.open_count));
    }
  });
}

// Per class (index = class index - 1), for the allocated file classes: the class's
// bucket of deleted files + every allocated file instance of the class.
std::vector<io_stats> file_class_stats(scan_state& s) {
  s.load_classes();
  std::vector<io_stats> sums(s.classes.size(), kZeroIoStats);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || s.classes[c].kind != kKindFile) continue;
    if (const io_stats* b = s.r.at<io_stats>(kArrayClassIo, c)) merge_io_stats(sums[c], load_io_stats(*b));
  }
  for_each_file(s, [&sums](const file_copy& f, const class_entry&) {
    merge_io_stats(sums[f.class_index - 1], f.stats);
  });
  return sums;
}

// table_io_waits_summary_by_table (by_index = false) or _by_index_usage (true).
void table_io_rows(scan_state& s, bool by_index) {
  table_copy t;
  for (std::uint64_t i = 0; i < s.r.count(kArrayTables); ++i) {
    const table_share& rec = *s.r.at<table_share>(kArrayTables, i);
    if (!s.accept(
            read_versioned(rec, [&s, i, &t](const table_share& sh) { copy_table(s.r, i, sh, t, true); })))
      continue;
    const char* type = object_type_name(t.object_type);
    if (type == nullptr) {
      ++s.invalid;
      continue;
    }
    auto key = [&](row_builder& x) {
      x.push_back(s.text_cell(std::string_view(type)));
      x.push_back(s.text_cell(t.schema.str()));
      x.push_back(s.text_cell(t.name.str()));
    };
    if (!by_index) {
      table_io_stat sum = kZeroTableIo;
      merge_table_io(sum, t.no_index);
      for (const index_copy& ix : t.indexes) merge_table_io(sum, ix.stat);
      auto& x = s.add_row();
      key(x);
      append_table_io_cells(x, sum);
      continue;
    }
    for (const index_copy& ix : t.indexes) {
      auto& x = s.add_row();
      key(x);
      x.push_back(s.text_cell(ix.name.str()));
      append_table_io_cells(x, ix.stat);
    }
    auto& x = s.add_row();
    key(x);
    x.push_back(null_cell());  // io that used no index
    append_table_io_cells(x, t.no_index);
  }
}

}  // namespace

void rows_file_instances(scan_state& s) { file_rows(s, false); }

void rows_file_summary_by_instance(scan_state& s) { file_rows(s, true); }

void rows_file_summary_by_event_name(scan_state& s) {
  s.load_classes();
  const std::vector<io_stats> sums = file_class_stats(s);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || s.classes[c].kind != kKindFile) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(s.classes[c].name)));
    append_io_cells(x, sums[c]);
  }
}

void rows_table_io_by_table(scan_state& s) { table_io_rows(s, false); }

// One row per declared index and one for the io that used none, per table.
void rows_table_io_by_index_usage(scan_state& s) { table_io_rows(s, true); }

// Copies the share in slot `slot` (inside a read_versioned / read_referenced copy:
// the share's lock word is re-checked around it) and its declared indexes: the first
// index_count (acquire: the provider writes an index's name before publishing the
// count) of its max_indexes_per_table slots.
void copy_table(const region_reader::impl& r, std::uint64_t slot, const table_share& s, table_copy& c,
                bool stats) {
  c.object_type = load_relaxed(s.object_type);
  c.schema.load(s.schema);
  c.name.load(s.name);
  if (stats) c.no_index = load_table_io(s.no_index);
  std::uint64_t n = load_acquire(s.index_count);
  if (n > r.indexes_per_table) n = r.indexes_per_table;
  c.indexes.resize(n);
  for (std::uint64_t k = 0; k < n; ++k) {
    const index_stat* ix = r.at<index_stat>(kArrayTableIndexes, slot * r.indexes_per_table + k);
    if (ix == nullptr) {  // cannot happen: the geometry was checked
      c.indexes.resize(k);
      break;
    }
    c.indexes[k].name.load(ix->name);
    if (stats) c.indexes[k].stat = load_table_io(ix->stat);
  }
}

}  // namespace pfs::reader::detail
