// The statement digest table (events_statements_summary_by_digest): rows found or
// claimed by (schema, digest), summed with atomic adds (every thread shares it).
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

namespace {

std::uint64_t digest_key(const std::uint8_t (&digest)[kDigestLen], const char* schema) {
  std::uint64_t k = 0;
  std::memcpy(&k, digest, sizeof(k));
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the schema
  for (const char* p = schema; p != nullptr && *p != '\0'; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  k ^= h;
  return k <= kNullDigestKey ? k + 2 : k;
}

void init_digest_row(digest_record& d, std::uint64_t key, const std::uint8_t* digest, const char* schema,
                     const char* text, std::size_t text_len) {
  const std::uint32_t word = load_relaxed(d.lock);
  store_relaxed(d.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::size_t i = 0; i < kDigestLen; ++i)
    store_relaxed(d.digest[i], digest != nullptr ? digest[i] : std::uint8_t{0});
  store_cstr(d.schema, kObjectSchemaLen, schema);
  store_text(d.digest_text, kDigestTextLen, text, text_len);
  zero_stat(d.stat);
  for (std::uint64_t& c : d.h.counts) store_relaxed(c, std::uint64_t{0});
  store_relaxed(d.first_seen_ns, std::uint64_t{0});
  store_relaxed(d.last_seen_ns, std::uint64_t{0});
  store_relaxed(d.sample_timer_wait, std::uint64_t{0});
  store_relaxed(d.sample_seen_ns, std::uint64_t{0});
  (void)key;
  store_release(d.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
}

// MySQL's query sample: the slowest recent statement of the digest (replaced by
// a slower one, or when older than 60 seconds).
void update_sample(digest_record& d, const statement_record& r, std::uint64_t ps, std::uint64_t seen_ns) {
  constexpr std::uint64_t kMaxSampleAgeNs = 60ull * 1000000000ull;
  const std::uint64_t old_seen = load_relaxed(d.sample_seen_ns);
  if (old_seen != 0 && ps <= load_relaxed(d.sample_timer_wait) && seen_ns < old_seen + kMaxSampleAgeNs)
    return;
  // One writer at a time; a thread that finds the sample being written skips it.
  std::uint32_t seq = load_relaxed(d.sample_seq);
  if ((seq & 1u) != 0 ||
      !__atomic_compare_exchange_n(&d.sample_seq, &seq, seq | 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  std::atomic_thread_fence(std::memory_order_release);
  const std::uint32_t len = load_relaxed(r.sql_text_length);
  const char* text = statement_text(r);
  std::size_t n = len < kSampleTextLen ? len : kSampleTextLen - 1;
  for (std::size_t i = 0; i < n; ++i) store_relaxed(d.sample_text[i], load_relaxed(text[i]));
  store_relaxed(d.sample_text[n], '\0');
  store_relaxed(d.sample_seen_ns, seen_ns);
  store_relaxed(d.sample_timer_wait, ps);
  store_release(d.sample_seq, (seq | 1u) + 1);
}

}  // namespace

// The 1-based row of (schema, digest), claimed if new; the NULL digest row (1)
// when the table is full; 0 when there is no digest table.
std::uint32_t find_digest(const std::uint8_t (&digest)[kDigestLen], const char* schema, const char* text,
                          std::size_t text_len, std::uint64_t& key_out) {
  const std::uint64_t rows = g_work.digest_rows;
  if (rows < 2) return 0;
  const std::uint64_t key = digest_key(digest, schema);
  key_out = key;
  const std::uint64_t n = rows - 1;  // rows 2..rows hold digests
  std::uint64_t idx = 1 + key % n;
  for (std::uint64_t probe = 0; probe < n; ++probe) {
    digest_record& d = g_work.digests[idx];
    std::uint64_t k = load_acquire(d.key);
    if (k == key) return static_cast<std::uint32_t>(idx + 1);
    if (k == 0) {
      if (__atomic_compare_exchange_n(&d.key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        init_digest_row(d, key, digest, schema, text, text_len);
        return static_cast<std::uint32_t>(idx + 1);
      }
      if (k == key) return static_cast<std::uint32_t>(idx + 1);
    }
    idx = idx + 1 == rows ? 1 : idx + 1;
  }
  bump_lost(kLostDigests);
  key_out = kNullDigestKey;
  digest_record& null_row = g_work.digests[0];
  std::uint64_t k = 0;
  if (__atomic_compare_exchange_n(&null_row.key, &k, kNullDigestKey, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    init_digest_row(null_row, kNullDigestKey, nullptr, nullptr, nullptr, 0);
  return 1;
}

void add_to_digest(std::uint32_t row, std::uint64_t key, const statement_record& r, std::uint64_t ps,
                   bool timed, std::uint64_t seen_ns) {
  if (row == 0 || row > g_work.digest_rows) return;
  digest_record& d = g_work.digests[row - 1];
  // The row must still be this digest's and initialized: a TRUNCATE may have
  // emptied it (and another digest claimed it) since the statement began, and a
  // row just claimed by another thread may not be initialized yet (then this
  // statement is not counted in it).
  if (load_acquire(d.key) != key || (load_acquire(d.lock) & kStateMask) != kStateAllocated) return;
  statement_stat& s = d.stat;
  __atomic_fetch_add(&s.time.count, 1, __ATOMIC_RELAXED);
  if (timed) {
    if (ps != 0) add_sum_atomic(s.time.sum, s.time.sum_hi, ps);
    atomic_min(s.time.min, ps);
    atomic_max(s.time.max, ps);
    __atomic_fetch_add(&d.h.counts[histogram::bucket_of(ps)], 1, __ATOMIC_RELAXED);
  }
  if (const std::uint64_t lock = load_relaxed(r.lock_time); lock != 0)
    add_sum_atomic(s.lock_time, s.lock_time_hi, lock);
  add_atomic(s.errors, load_relaxed(r.errors));
  add_atomic(s.warnings, load_relaxed(r.warnings));
  add_atomic(s.rows_affected, load_relaxed(r.rows_affected));
  add_atomic(s.rows_sent, load_relaxed(r.rows_sent));
  add_atomic(s.rows_examined, load_relaxed(r.rows_examined));
  if (const std::uint64_t cpu = load_relaxed(r.cpu_time); cpu != 0)
    add_sum_atomic(s.cpu_time, s.cpu_time_hi, cpu);
  max_memory_atomic(s, load_relaxed(r.max_controlled_memory), load_relaxed(r.max_total_memory));
  std::uint64_t first = 0;
  __atomic_compare_exchange_n(&d.first_seen_ns, &first, seen_ns, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  atomic_max(d.last_seen_ns, seen_ns);
  if (row != 1 && load_relaxed(r.has_text) != 0) update_sample(d, r, ps, seen_ns);
}

}  // namespace pfs::detail
