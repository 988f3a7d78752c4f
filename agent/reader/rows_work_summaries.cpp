// Row builders of the summaries of units of work (events_stages_summary_*,
// events_statements_summary_* and _by_digest, events_transactions_summary_*) and of
// the latency histograms (events_statements_histogram_*, and beyond MySQL
// events_waits_histogram_global_by_event_name).
//
// Global rows = the class's bucket of exited threads + every live thread's
// statistics (a thread moves its statistics into the bucket when it exits).
#include <iterator>

#include "agent/reader/internal/holder_rows.h"
#include "agent/reader/internal/reader_internal.h"
#include "agent/region/histogram.h"

namespace pfs::reader::detail {

namespace {

cell float_cell(double v) {
  cell c;
  c.null = false;
  c.d = v;
  return c;
}

statement_stat load_statement_stat(const statement_stat& s) {
  statement_stat o;
  o.time = load_stat(s.time);
  const wide_sum lock = load_sum(s.lock_time, s.lock_time_hi), cpu = load_sum(s.cpu_time, s.cpu_time_hi);
  o.lock_time = static_cast<std::uint64_t>(lock);
  o.lock_time_hi = static_cast<std::uint64_t>(lock >> 64);
  o.cpu_time = static_cast<std::uint64_t>(cpu);
  o.cpu_time_hi = static_cast<std::uint64_t>(cpu >> 64);
  o.errors = load_relaxed(s.errors);
  o.warnings = load_relaxed(s.warnings);
  o.rows_affected = load_relaxed(s.rows_affected);
  o.rows_sent = load_relaxed(s.rows_sent);
  o.rows_examined = load_relaxed(s.rows_examined);
  o.max_controlled_memory = load_relaxed(s.max_controlled_memory);
  o.max_total_memory = load_relaxed(s.max_total_memory);
  return o;
}

constexpr statement_stat kZeroStatement{kZeroStat, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

// a += b, 128 bits in (lo, hi) pairs.
void add_wide(std::uint64_t& lo, std::uint64_t& hi, std::uint64_t b_lo, std::uint64_t b_hi) {
  const wide_sum v = make_wide(lo, hi) + make_wide(b_lo, b_hi);
  lo = static_cast<std::uint64_t>(v);
  hi = static_cast<std::uint64_t>(v >> 64);
}
constexpr transaction_stat kZeroTransaction{kZeroStat, kZeroStat, kZeroStat};

void add_statement_stat(statement_stat& into, const statement_stat& s) {
  merge_stat(into.time, s.time);
  add_wide(into.lock_time, into.lock_time_hi, s.lock_time, s.lock_time_hi);
  into.errors = sat_add(into.errors, s.errors);
  into.warnings = sat_add(into.warnings, s.warnings);
  into.rows_affected = sat_add(into.rows_affected, s.rows_affected);
  into.rows_sent = sat_add(into.rows_sent, s.rows_sent);
  into.rows_examined = sat_add(into.rows_examined, s.rows_examined);
  add_wide(into.cpu_time, into.cpu_time_hi, s.cpu_time, s.cpu_time_hi);
  if (s.max_controlled_memory > into.max_controlled_memory)
    into.max_controlled_memory = s.max_controlled_memory;
  if (s.max_total_memory > into.max_total_memory) into.max_total_memory = s.max_total_memory;
}

transaction_stat load_transaction_stat(const transaction_stat& s) {
  return {load_stat(s.all), load_stat(s.read_write), load_stat(s.read_only)};
}

void add_transaction_stat(transaction_stat& into, const transaction_stat& s) {
  merge_stat(into.all, s.all);
  merge_stat(into.read_write, s.read_write);
  merge_stat(into.read_only, s.read_only);
}

// count_star ... max_timer_wait, sum_lock_time ... count_secondary (28 columns).
void append_statement_cells(row_builder& x, const statement_stat& s) {
  append_stat_cells(x, s.time);
  x.push_back(wide_cell(make_wide(s.lock_time, s.lock_time_hi)));
  x.push_back(int_cell(s.errors));
  x.push_back(int_cell(s.warnings));
  x.push_back(int_cell(s.rows_affected));
  x.push_back(int_cell(s.rows_sent));
  x.push_back(int_cell(s.rows_examined));
  for (int k = 0; k < 13; ++k)
    x.push_back(int_cell(0));  // sum_created_tmp_disk_tables ... no_good_index_used
  x.push_back(wide_cell(make_wide(s.cpu_time, s.cpu_time_hi)));
  x.push_back(int_cell_signed(s.max_controlled_memory));
  x.push_back(int_cell_signed(s.max_total_memory));
  x.push_back(int_cell(0));  // count_secondary
}

// A histogram's counts loaded one by one into Out (as many as Out holds): a
// statement or wait histogram as it is, or the statement share of a pool entry
// (its first kHistogramBuckets counts).
template <class Out, class In>
Out load_histogram(const In& h) {
  static_assert(std::size(Out{}.counts) <= std::size(In{}.counts));
  Out o;
  for (std::size_t b = 0; b < std::size(o.counts); ++b) o.counts[b] = load_relaxed(h.counts[b]);
  return o;
}

// The rows of a summary by account, user or host: per holder of the kind and per
// class of the family (index: its kind_index, or 0 for the transaction class).
template <class S, class Load, class Add, class Emit>
void holder_summary(scan_state& s, summary_kind which, std::uint8_t class_kind, array_id thread_rows,
                    array_id holder_rows, std::uint64_t per, const S& zero, Load&& load, Add&& add,
                    Emit&& emit) {
  s.load_classes();
  const std::vector<holder_copy> holders = load_holders(s);
  const auto kind = static_cast<holder_kind>(holder_kind_of(which));
  const auto sums = holder_sums<S>(s, holders, kind, thread_rows, holder_rows, per, zero, load, add);
  for (std::size_t h = 0; h < holders.size(); ++h) {
    if (holders[h].kind != kind || sums[h].empty()) continue;
    for (const class_entry& c : s.classes) {
      const std::uint64_t i = class_kind == kKindTransaction ? 0 : c.kind_index;
      if (!c.valid || c.kind != class_kind || i >= per) continue;
      auto& x = s.add_row();
      append_holder_key(s, x, holders[h]);
      x.push_back(s.text_cell(std::string_view(c.name)));
      emit(x, sums[h][i]);
    }
  }
}

}  // namespace

void rows_stage_summaries(scan_state& s, summary_kind which) {
  if (by_holder(which))
    return holder_summary<wait_stat>(
        s, which, kKindStage, kArrayThreadStageStats, kArrayAccountStageStats, s.r.stage_classes, kZeroStat,
        [](const wait_stat& w) { return load_stat(w); },
        [](wait_stat& a, const wait_stat& b) { merge_stat(a, b); },
        [](row_builder& x, const wait_stat& w) { append_stat_cells(x, w); });
  const bool by_thread = which == summary_kind::by_thread;
  s.load_classes();
  const std::uint64_t per = s.r.stage_classes;
  std::vector<wait_stat> global(per, kZeroStat);
  for (std::uint64_t i = 0; i < per; ++i) global[i] = load_stat(*s.r.at<wait_stat>(kArrayClassStageStats, i));
  std::vector<wait_stat> mine(per, kZeroStat);
  for (const live_thread& t : live_threads(s)) {
    for (std::uint64_t i = 0; i < per; ++i) {
      mine[i] = load_stat(*s.r.at<wait_stat>(kArrayThreadStageStats, t.slot * per + i));
      merge_stat(global[i], mine[i]);
    }
    if (!by_thread) continue;
    for (const class_entry& c : s.classes) {
      if (!c.valid || c.kind != kKindStage || c.kind_index >= per) continue;
      auto& x = s.add_row();
      x.push_back(int_cell(t.thread_id));
      x.push_back(s.text_cell(std::string_view(c.name)));
      append_stat_cells(x, mine[c.kind_index]);
    }
  }
  if (by_thread) return;
  for (const class_entry& c : s.classes) {
    if (!c.valid || c.kind != kKindStage || c.kind_index >= per) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    append_stat_cells(x, global[c.kind_index]);
  }
}

void rows_statement_summaries(scan_state& s, summary_kind which) {
  if (by_holder(which))
    return holder_summary<statement_stat>(s, which, kKindStatement, kArrayThreadStatementStats,
                                          kArrayAccountStatementStats, s.r.statement_classes, kZeroStatement,
                                          load_statement_stat, add_statement_stat, append_statement_cells);
  const bool by_thread = which == summary_kind::by_thread;
  s.load_classes();
  const std::uint64_t per = s.r.statement_classes;
  std::vector<statement_stat> global(per, kZeroStatement);
  for (std::uint64_t i = 0; i < per; ++i)
    global[i] = load_statement_stat(*s.r.at<statement_stat>(kArrayClassStatementStats, i));
  std::vector<statement_stat> mine(per, kZeroStatement);
  for (const live_thread& t : live_threads(s)) {
    for (std::uint64_t i = 0; i < per; ++i) {
      mine[i] = load_statement_stat(*s.r.at<statement_stat>(kArrayThreadStatementStats, t.slot * per + i));
      add_statement_stat(global[i], mine[i]);
    }
    if (!by_thread) continue;
    for (const class_entry& c : s.classes) {
      if (!c.valid || c.kind != kKindStatement || c.kind_index >= per) continue;
      auto& x = s.add_row();
      x.push_back(int_cell(t.thread_id));
      x.push_back(s.text_cell(std::string_view(c.name)));
      append_statement_cells(x, mine[c.kind_index]);
    }
  }
  if (by_thread) return;
  for (const class_entry& c : s.classes) {
    if (!c.valid || c.kind != kKindStatement || c.kind_index >= per) continue;
    auto& x = s.add_row();
    x.push_back(s.text_cell(std::string_view(c.name)));
    append_statement_cells(x, global[c.kind_index]);
  }
}

void rows_transaction_summaries(scan_state& s, summary_kind which) {
  if (by_holder(which))
    return holder_summary<transaction_stat>(
        s, which, kKindTransaction, kArrayThreadTransactionStats, kArrayAccountTransactionStats,
        s.r.count(kArrayClassTransactionStats), kZeroTransaction, load_transaction_stat, add_transaction_stat,
        [](row_builder& x, const transaction_stat& t) {
          append_stat_cells(x, t.all);
          append_stat_cells(x, t.read_write);
          append_stat_cells(x, t.read_only);
        });
  const bool by_thread = which == summary_kind::by_thread;
  s.load_classes();
  const class_entry* cls = nullptr;
  for (const class_entry& c : s.classes)
    if (c.valid && c.kind == kKindTransaction) cls = &c;
  if (cls == nullptr || s.r.count(kArrayClassTransactionStats) == 0) return;
  transaction_stat global = load_transaction_stat(*s.r.at<transaction_stat>(kArrayClassTransactionStats, 0));
  const auto emit = [](row_builder& x, const transaction_stat& t) {
    append_stat_cells(x, t.all);
    append_stat_cells(x, t.read_write);
    append_stat_cells(x, t.read_only);
  };
  for (const live_thread& t : live_threads(s)) {
    const transaction_stat* p = s.r.at<transaction_stat>(kArrayThreadTransactionStats, t.slot);
    const transaction_stat mine = p != nullptr ? load_transaction_stat(*p) : kZeroTransaction;
    add_transaction_stat(global, mine);
    if (!by_thread) continue;
    auto& x = s.add_row();
    x.push_back(int_cell(t.thread_id));
    x.push_back(s.text_cell(std::string_view(cls->name)));
    emit(x, mine);
  }
  if (by_thread) return;
  auto& x = s.add_row();
  x.push_back(s.text_cell(std::string_view(cls->name)));
  emit(x, global);
}

namespace {

struct digest_copy {
  bool null_row = false;
  std::uint8_t digest[kDigestLen] = {};
  fixed_str<kObjectSchemaLen> schema;
  fixed_str<kDigestTextLen> text;
  statement_stat stat = kZeroStatement;
  std::uint64_t first_seen = 0, last_seen = 0;
  latency_histogram h;
};

rd read_digest(const digest_record& d, std::uint64_t row, digest_copy& c) {
  return read_versioned(d, [&](const digest_record& s) {
    c.null_row = row == 0;
    for (std::size_t i = 0; i < kDigestLen; ++i) c.digest[i] = load_relaxed(s.digest[i]);
    c.schema.load(s.schema);
    c.text.load(s.digest_text);
    c.stat = load_statement_stat(s.stat);
    c.first_seen = load_relaxed(s.first_seen_ns);
    c.last_seen = load_relaxed(s.last_seen_ns);
    c.h = load_histogram<latency_histogram>(s.h);
  });
}

cell timestamp_cell(std::uint64_t ns) { return int_cell(ns / 1000); }

// The histogram rows of events_statements_histogram_global (by_digest = false) or
// _by_digest (true).
void statement_histogram(scan_state& s, bool by_digest) {
  const auto rows = [&s](const latency_histogram& hist, auto&& key) {
    std::uint64_t total = 0;
    for (std::uint64_t c : hist.counts) total = sat_add(total, c);
    std::uint64_t below = 0;
    for (std::uint32_t b = 0; b < kHistogramBuckets; ++b) {
      below = sat_add(below, hist.counts[b]);
      auto& x = s.add_row();
      key(x);
      x.push_back(int_cell(b));
      x.push_back(int_cell(histogram::bucket_low(b)));
      x.push_back(int_cell(histogram::bucket_high(b)));
      x.push_back(int_cell(hist.counts[b]));
      x.push_back(int_cell(below));
      x.push_back(float_cell(total == 0 ? 0.0 : static_cast<double>(below) / static_cast<double>(total)));
    }
  };
  if (!by_digest) {
    if (s.r.count(kArrayStatementHistogram) == 0) return;
    // Exited threads' buckets + every live thread's own statement histogram.
    latency_histogram all =
        load_histogram<latency_histogram>(*s.r.at<latency_histogram>(kArrayStatementHistogram, 0));
    for (std::uint64_t i = 0; i < s.r.count(kArrayWaitHistograms); ++i) {
      const thread_histogram& th = *s.r.at<thread_histogram>(kArrayWaitHistograms, i);
      std::uint32_t cls = 0;
      latency_histogram hist;
      if (!s.accept(read_versioned(th,
                                   [&](const thread_histogram& t) {
                                     cls = load_relaxed(t.class_index);
                                     hist = load_histogram<latency_histogram>(t.h);
                                   })) ||
          cls != kStatementHistogramClass)
        continue;
      for (std::uint32_t b = 0; b < kHistogramBuckets; ++b)
        all.counts[b] = sat_add(all.counts[b], hist.counts[b]);
    }
    rows(all, [](row_builder&) {});
    return;
  }
  for (std::uint64_t i = 0; i < s.r.count(kArrayDigests); ++i) {
    digest_copy c;
    if (!s.accept(read_digest(*s.r.at<digest_record>(kArrayDigests, i), i, c)) || c.first_seen == 0) continue;
    const std::string schema = c.schema.str(), hex = digest_hex(c.digest);
    rows(c.h, [&](row_builder& x) {
      x.push_back(c.null_row || schema.empty() ? null_cell() : s.text_cell(std::string_view(schema)));
      x.push_back(c.null_row ? null_cell() : s.text_cell(std::string_view(hex)));
    });
  }
}

}  // namespace

void rows_digests(scan_state& s) {
  for (std::uint64_t i = 0; i < s.r.count(kArrayDigests); ++i) {
    const digest_record& d = *s.r.at<digest_record>(kArrayDigests, i);
    digest_copy c;
    if (!s.accept(read_digest(d, i, c)) || c.first_seen == 0) continue;
    // The query sample has a seqlock of its own (several threads may replace it).
    fixed_str<kSampleTextLen> sample;
    std::uint64_t sample_seen = 0, sample_wait = 0;
    bool sample_ok = false;
    for (int a = 0; a < kAttempts && !sample_ok; ++a) {
      const std::uint32_t s1 = load_acquire(d.sample_seq);
      if ((s1 & 1u) != 0) continue;
      sample.load(d.sample_text);
      sample_seen = load_relaxed(d.sample_seen_ns);
      sample_wait = load_relaxed(d.sample_timer_wait);
      std::atomic_thread_fence(std::memory_order_acquire);
      sample_ok = load_relaxed(d.sample_seq) == s1;
    }
    auto& x = s.add_row();
    x.push_back(c.null_row || c.schema.empty() ? null_cell() : s.text_cell(c.schema.str()));
    x.push_back(c.null_row ? null_cell() : s.text_cell(digest_hex(c.digest)));
    x.push_back(c.null_row ? null_cell() : s.text_cell(c.text.str()));
    append_statement_cells(x, c.stat);
    x.push_back(timestamp_cell(c.first_seen));
    x.push_back(timestamp_cell(c.last_seen));
    for (double q : {0.95, 0.99, 0.999}) x.push_back(int_cell(histogram::quantile(c.h.counts, q)));
    x.push_back(sample_ok && sample_seen != 0 ? s.text_cell(sample.str()) : null_cell());
    x.push_back(timestamp_cell(sample_ok ? sample_seen : 0));
    x.push_back(int_cell(sample_ok ? sample_wait : 0));
  }
}

void rows_statement_histogram_global(scan_state& s) { statement_histogram(s, false); }

void rows_statement_histogram_by_digest(scan_state& s) { statement_histogram(s, true); }

class_histograms wait_class_histograms(scan_state& s) {
  class_histograms out;
  out.slot.assign(s.classes.size(), -1);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || !is_wait_kind(s.classes[c].kind)) continue;
    out.slot[c] = static_cast<std::int32_t>(out.sums.size());
    const wait_histogram* hist = s.r.at<wait_histogram>(kArrayClassWaitHistograms, c);
    out.sums.push_back(hist != nullptr ? load_histogram<wait_histogram>(*hist) : wait_histogram{});
  }
  for (std::uint64_t i = 0; i < s.r.count(kArrayWaitHistograms); ++i) {
    const thread_histogram& th = *s.r.at<thread_histogram>(kArrayWaitHistograms, i);
    std::uint32_t cls = 0;
    wait_histogram hist;
    if (!s.accept(read_versioned(th, [&](const thread_histogram& t) {
          cls = load_relaxed(t.class_index);
          hist = load_histogram<wait_histogram>(t.h);
        })))
      continue;
    if (cls == kStatementHistogramClass) continue;  // a thread's statement histogram
    if (cls == 0 || cls > s.r.classes) {
      ++s.invalid;
      continue;
    }
    if (cls > out.slot.size() || out.slot[cls - 1] < 0) continue;  // not a registered wait class
    wait_histogram& sum = out.sums[out.slot[cls - 1]];
    for (std::uint32_t b = 0; b < kWaitHistogramBuckets; ++b)
      sum.counts[b] = sat_add(sum.counts[b], hist.counts[b]);
  }
  return out;
}

void rows_wait_histograms(scan_state& s) {
  s.load_classes();
  const class_histograms all = wait_class_histograms(s);
  for (std::size_t c = 0; c < s.classes.size(); ++c) {
    if (!s.classes[c].valid || !is_wait_kind(s.classes[c].kind)) continue;
    const wait_histogram& hist = *all.of(c);
    std::uint64_t total = 0;
    for (std::uint64_t n : hist.counts) total = sat_add(total, n);
    std::uint64_t below = 0;
    for (std::uint32_t b = 0; b < kWaitHistogramBuckets; ++b) {
      below = sat_add(below, hist.counts[b]);
      auto& x = s.add_row();
      x.push_back(s.text_cell(std::string_view(s.classes[c].name)));
      x.push_back(int_cell(b));
      x.push_back(int_cell(histogram::wait_scale::low(b)));
      x.push_back(int_cell(histogram::wait_scale::high(b)));
      x.push_back(int_cell(hist.counts[b]));
      x.push_back(int_cell(below));
      x.push_back(float_cell(total == 0 ? 0.0 : static_cast<double>(below) / static_cast<double>(total)));
    }
  }
}

}  // namespace pfs::reader::detail
