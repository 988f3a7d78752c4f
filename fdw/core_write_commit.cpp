// Commit: under the setup lock of each region, the log is checked against the
// current setup, then applied in order through the setup functions.
#include "fdw/core_write.h"

namespace pfs::fdw::write {

// ---------------------------------------------------------------------------
// Commit

struct region_commit {
  mapped_region* region = nullptr;
  std::unique_ptr<setup_lock_guard> lock;
  std::vector<const pending_op*> ops;
  std::vector<bool> skip;  // per op: finds nothing, do nothing
};

// Checks every change of one region against its current setup (the setup lock is
// held), deciding which ones find nothing.
static bool validate(region_commit& rc, PfsCoreWriteError* err) {
  mapped_region& region = *rc.region;
  const region_map& m = region.reader->region();
  rc.skip.assign(rc.ops.size(), false);
  std::map<int, std::set<std::string>> keys;            // setup_actors / setup_objects: keys present
  std::unordered_map<std::string, std::uint8_t> flags;  // setup_instruments: flags by name
  for (std::size_t i = 0; i < rc.ops.size(); ++i) {
    const pending_op& op = *rc.ops[i];
    const reader::table_def& t = *table_at(op.table);
    const table_rules& r = *rules_of(op.table);
    switch (r.id) {
      case table_id::setup_actors:
      case table_id::setup_objects: {
        auto it = keys.find(op.table);
        if (it == keys.end()) {
          it = keys.emplace(op.table, std::set<std::string>{}).first;
          if (!region_keys(region, r, t, it->second, err)) return false;
        }
        bool skip = false;
        if (!replay_key(it->second, op, r, capacity_of(region, r.id), t.name, skip, err)) return false;
        rc.skip[i] = skip;
        break;
      }
      case table_id::setup_instruments: {
        const std::string& name = op.key[0].s;
        const std::uint32_t index = region.reader->find_class(name);
        if (index == 0) {  // a region of another provider: the instrument is not there
          rc.skip[i] = true;
          break;
        }
        auto it = flags.find(name);
        if (it == flags.end())
          it = flags
                   .emplace(name, layout::load_relaxed(
                                      m.array<layout::class_record>(layout::kArrayClasses)[index - 1].flags))
                   .first;
        const int enabled = flag_of(op, t, "enabled"), timed = flag_of(op, t, "timed"),
                  trace = flag_of(op, t, "trace_enabled");
        std::uint8_t f = it->second;
        auto put = [&f](int v, std::uint8_t bit) {
          if (v >= 0) f = static_cast<std::uint8_t>(v ? f | bit : f & ~bit);
        };
        put(enabled, layout::kFlagEnabled);
        put(timed, layout::kFlagTimed);
        put(trace, layout::kFlagTraced);
        if (enabled == 0) f = static_cast<std::uint8_t>(f & ~layout::kFlagTraced);
        if ((f & layout::kFlagTraced) && !(f & layout::kFlagEnabled)) {
          write_error(err, kSerializationFailure, "could not enable tracing of instrument " + dq(name),
                      "Another transaction disabled the instrument after this transaction changed it.",
                      "Retry the transaction.");
          return false;
        }
        it->second = f;
        break;
      }
      case table_id::setup_timers: {
        const value* v = find_set(op, reader::column_index(t, "timer_name"));
        const timers::timer_kind k = v != nullptr ? timers::timer_from_name(v->s) : timers::timer_kind::none;
        if (k == timers::timer_kind::none ||
            layout::load_relaxed(m.header().timers[static_cast<int>(k)].available) == 0) {
          write_error(err, kInvalidParameterValue,
                      "timer " + dq(v != nullptr ? v->s : "") + " is not available",
                      "The region " + dq(region.path) + " was replaced by a provider without this timer.",
                      "The timers available in this region are " + available_timers(m.header()) + ".");
          return false;
        }
        break;
      }
      default:
        break;
    }
  }
  return true;
}

static const std::string& text_at(const pending_op& op, const reader::table_def& t, const char* column) {
  static const std::string kEmpty;
  const value* v = find_set(op, reader::column_index(t, column));
  return v != nullptr ? v->s : kEmpty;
}

// TRUNCATE of a summary by account, user or host (kReset<family>By<kind>: three
// consecutive bits per family from kResetWaitsByAccount on, account, user, host).
static void reset_by_holder(const region_map& m, std::uint64_t effect) {
  constexpr setup::account_family kFamilies[] = {setup::kFamilyWaits,      setup::kFamilyStages,
                                                 setup::kFamilyStatements, setup::kFamilyTransactions,
                                                 setup::kFamilyMemory,     setup::kFamilyErrors};
  static_assert(kResetErrorsByHost == kResetWaitsByAccount << 17);
  for (unsigned bit = 0; bit < 18; ++bit)
    if (effect == kResetWaitsByAccount << bit)
      setup::reset_holder_summaries(m, kFamilies[bit / 3], static_cast<layout::holder_kind>(1 + bit % 3));
}

// Applies one change (validated) through the agent's setup functions.
static void apply(const region_map& m, const mapped_region& region, const pending_op& op) {
  const reader::table_def& t = *table_at(op.table);
  const table_rules& r = *rules_of(op.table);
  if (op.kind == op_kind::truncate) {
    switch (r.truncate) {
      case kHideCurrent:
        setup::truncate_events(m, layout::kTruncateCurrent);
        break;
      case kHideHistory:
        setup::truncate_events(m, layout::kTruncateHistory);
        break;
      case kHideHistoryLong:
        setup::truncate_events(m, layout::kTruncateHistoryLong);
        break;
      case kResetWait:
        setup::reset_wait_summaries(m);
        break;
      case kResetThread:
        setup::reset_thread_summaries(m);
        break;
      case kResetFile:
        setup::reset_file_summaries(m);
        break;
      case kResetSocket:
        setup::reset_socket_summaries(m);
        break;
      case kResetMemory:
        setup::reset_memory_summaries(m, false);
        break;
      case kResetMemoryByThread:
        setup::reset_memory_summaries(m, true);
        break;
      case kResetErrors:
        setup::reset_error_summaries(m, false);
        break;
      case kResetErrorsByThread:
        setup::reset_error_summaries(m, true);
        break;
      case kResetTable:
        setup::reset_table_summaries(m);
        break;
      case kResetTableLocks:
        setup::reset_table_lock_summaries(m);
        break;
      case kEmptyActors:
        setup::truncate_actors(m);
        break;
      case kEmptyObjects:
        setup::truncate_objects(m);
        break;
      case kHideStages:
        setup::truncate_events(m, layout::kTruncateStagesCurrent);
        break;
      case kHideStagesHistory:
        setup::truncate_events(m, layout::kTruncateStagesHistory);
        break;
      case kHideStagesHistoryLong:
        setup::truncate_events(m, layout::kTruncateStagesHistoryLong);
        break;
      case kHideStatements:
        setup::truncate_events(m, layout::kTruncateStatementsCurrent);
        break;
      case kHideStatementsHistory:
        setup::truncate_events(m, layout::kTruncateStatementsHistory);
        break;
      case kHideStatementsHistoryLong:
        setup::truncate_events(m, layout::kTruncateStatementsHistoryLong);
        break;
      case kHideTransactions:
        setup::truncate_events(m, layout::kTruncateTransactionsCurrent);
        break;
      case kHideTransactionsHistory:
        setup::truncate_events(m, layout::kTruncateTransactionsHistory);
        break;
      case kHideTransactionsHistoryLong:
        setup::truncate_events(m, layout::kTruncateTransactionsHistoryLong);
        break;
      case kResetStages:
        setup::reset_stage_summaries(m, false);
        break;
      case kResetStagesByThread:
        setup::reset_stage_summaries(m, true);
        break;
      case kResetStatements:
        setup::reset_statement_summaries(m, false);
        break;
      case kResetStatementsByThread:
        setup::reset_statement_summaries(m, true);
        break;
      case kResetTransactions:
        setup::reset_transaction_summaries(m, false);
        break;
      case kResetTransactionsByThread:
        setup::reset_transaction_summaries(m, true);
        break;
      case kResetDigests:
        setup::reset_digests(m);
        break;
      case kResetStatementHistogram:
        setup::reset_statement_histogram(m);
        break;
      case kResetDigestHistograms:
        setup::reset_digest_histograms(m);
        break;
      case kResetWaitHistograms:
        setup::reset_wait_histograms(m);
        break;
      case kResetLockContention:
        setup::reset_lock_contention(m);
        break;
      case kResetAccounts:
        setup::reset_connections(m, layout::kHolderAccount);
        break;
      case kResetUsers:
        setup::reset_connections(m, layout::kHolderUser);
        break;
      case kResetHosts:
        setup::reset_connections(m, layout::kHolderHost);
        break;
      default:
        reset_by_holder(m, r.truncate);
        break;
    }
    return;
  }
  switch (r.id) {
    case table_id::setup_instruments:
      setup::set_instrument(m, region.reader->find_class(op.key[0].s), flag_of(op, t, "enabled"),
                            flag_of(op, t, "timed"), flag_of(op, t, "trace_enabled"));
      break;
    case table_id::setup_consumers: {
      const int id = setup::consumer_from_name(op.key[0].s);
      if (id >= 0 && flag_of(op, t, "enabled") >= 0)
        setup::set_consumer(m, static_cast<std::uint32_t>(id), flag_of(op, t, "enabled") == 1);
      break;
    }
    case table_id::setup_timers: {
      const int row = setup::timer_row_from_name(op.key[0].s);
      if (row >= 0)
        setup::set_timer(m, static_cast<setup::timer_row>(row),
                         timers::timer_from_name(text_at(op, t, "timer_name")));
      break;
    }
    case table_id::setup_meters: {
      const value* f = find_set(op, reader::column_index(t, "frequency"));
      setup::set_meter(m, setup::find_meter(m, op.key[0].s), flag_of(op, t, "enabled"),
                       f != nullptr && !f->null ? f->i : -1);
      break;
    }
    case table_id::threads:
      setup::set_thread(m, static_cast<std::uint64_t>(op.key[0].i), flag_of(op, t, "instrumented"),
                        flag_of(op, t, "history"));
      break;
    case table_id::setup_actors: {
      const std::string &host = op.key[0].s, &user = op.key[1].s, &role = op.key[2].s;
      if (op.kind == op_kind::insert)
        setup::insert_actor(m, host, user, role, flag_of(op, t, "enabled") == 1,
                            flag_of(op, t, "history") == 1, flag_of(op, t, "trace_enabled") == 1);
      else if (op.kind == op_kind::remove)
        setup::delete_actor(m, host, user, role);
      else
        setup::update_actor(m, host, user, role, flag_of(op, t, "enabled"), flag_of(op, t, "history"),
                            flag_of(op, t, "trace_enabled"));
      break;
    }
    case table_id::setup_objects: {
      const std::string &schema = op.key[1].s, &name = op.key[2].s;
      if (op.kind == op_kind::insert)
        setup::insert_object(m, schema, name, flag_of(op, t, "enabled") == 1, flag_of(op, t, "timed") == 1);
      else if (op.kind == op_kind::remove)
        setup::delete_object(m, schema, name);
      else
        setup::update_object(m, schema, name, flag_of(op, t, "enabled"), flag_of(op, t, "timed"));
      break;
    }
    default:
      break;
  }
}

bool commit(const volatile sig_atomic_t* interrupt, std::uint32_t timeout_ms, PfsCoreWriteError* err) {
  std::map<std::string, region_commit> regions;  // by path: locks taken in path order
  for (const pending_op& op : pending_log()) regions[op.path].ops.push_back(&op);
  for (auto& [path, rc] : regions) {
    rc.region = writable_region(path, err);
    if (rc.region == nullptr) return false;
    rc.lock = std::make_unique<setup_lock_guard>(rc.region->reader->region(), interrupt, timeout_ms);
    if (rc.lock->interrupted()) {
      set_error(&err->error, PFS_CORE_INTERRUPTED, "interrupted while waiting for the setup lock");
      return false;
    }
    if (rc.lock->timed_out()) {
      set_error(&err->error, PFS_CORE_LOCK_TIMEOUT,
                "could not lock the setup of region file " + dq(path) + " within " +
                    std::to_string(timeout_ms) + " ms",
                "The setup lock of region file " + dq(path) + " stayed taken for " +
                    std::to_string(timeout_ms) + " ms, by another session or by the instrumented program.");
      return false;
    }
    if (!rc.lock->locked()) {
      write_error(err, kLockNotAvailable, "could not lock the setup of region file " + dq(path),
                  std::string("Locking byte ") + std::to_string(layout::kSetupLockByte) +
                      " of the file failed: " + std::strerror(errno) + ".");
      return false;
    }
  }
  for (auto& [path, rc] : regions)
    if (!validate(rc, err)) return false;
  for (auto& [path, rc] : regions) {
    const region_map& m = rc.region->reader->region();
    for (std::size_t i = 0; i < rc.ops.size(); ++i)
      if (!rc.skip[i]) apply(m, *rc.region, *rc.ops[i]);
  }
  pending_log().clear();
  return true;  // the guards release the locks
}

}  // namespace pfs::fdw::write
