// region_sizes: the PFS_* size variables of the environment, and the layout's
// limits on them.
#include <cerrno>
#include <cstdlib>
#include <string>

#include "agent/region/region.h"
#include "agent/region/region_layout.h"
#include "agent/region/work_layout.h"

namespace pfs {

using namespace layout;

namespace {

bool parse_u32(const char* text, std::uint32_t& out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || v > 10000000ull || text[0] == '-') return false;
  out = static_cast<std::uint32_t>(v);
  return true;
}

}  // namespace

void region_sizes::apply_environment(std::string* bad) {
  const struct {
    const char* name;
    std::uint32_t* field;
  } vars[] = {
      {"PFS_MAX_CLASSES", &max_classes},
      {"PFS_MAX_THREADS", &max_threads},
      {"PFS_WAITS_STACK_DEPTH", &wait_stack_depth},
      {"PFS_WAITS_HISTORY_SIZE", &history_per_thread},
      {"PFS_WAITS_HISTORY_LONG_SIZE", &history_long_size},
      {"PFS_MAX_MUTEXES", &max_mutexes},
      {"PFS_MAX_RWLOCKS", &max_rwlocks},
      {"PFS_MAX_CONDS", &max_conds},
      {"PFS_MAX_SEMS", &max_sems},
      {"PFS_SETUP_ACTORS_SIZE", &setup_actors_size},
      {"PFS_MAX_SOURCES", &max_sources},
      {"PFS_MAX_FILES", &max_files},
      {"PFS_MAX_FILE_HANDLES", &max_file_handles},
      {"PFS_MAX_TABLES", &max_tables},
      {"PFS_MAX_INDEXES_PER_TABLE", &max_indexes_per_table},
      {"PFS_SETUP_OBJECTS_SIZE", &setup_objects_size},
      {"PFS_MAX_STAGE_CLASSES", &max_stage_classes},
      {"PFS_MAX_MEMORY_CLASSES", &max_memory_classes},
      {"PFS_MAX_STATEMENT_CLASSES", &max_statement_classes},
      {"PFS_STAGES_HISTORY_SIZE", &stages_history_size},
      {"PFS_STAGES_HISTORY_LONG_SIZE", &stages_history_long_size},
      {"PFS_STATEMENT_STACK_DEPTH", &statement_stack_depth},
      {"PFS_STATEMENTS_HISTORY_SIZE", &statements_history_size},
      {"PFS_STATEMENTS_HISTORY_LONG_SIZE", &statements_history_long_size},
      {"PFS_TRANSACTIONS_HISTORY_SIZE", &transactions_history_size},
      {"PFS_TRANSACTIONS_HISTORY_LONG_SIZE", &transactions_history_long_size},
      {"PFS_MAX_SQL_TEXT_LENGTH", &max_sql_text_length},
      {"PFS_DIGESTS_SIZE", &digest_size},
      {"PFS_WAIT_HISTOGRAMS", &wait_histograms},
      {"PFS_LOCK_CONTENTION_SIZE", &lock_contention_size},
      {"PFS_MAX_SOCKETS", &max_sockets},
      {"PFS_MAX_ERRORS", &max_errors},
      {"PFS_MAX_METADATA_LOCKS", &max_metadata_locks},
      {"PFS_MAX_DATA_LOCKS", &max_data_locks},
      {"PFS_MAX_DATA_LOCK_WAITS", &max_data_lock_waits},
      {"PFS_MAX_TLS_PROPERTIES", &max_tls_properties},
      {"PFS_ACCOUNTS_SIZE", &max_accounts},
      {"PFS_USERS_SIZE", &max_users},
      {"PFS_HOSTS_SIZE", &max_hosts},
      {"PFS_MAX_METERS", &max_meters},
      {"PFS_MAX_METRICS", &max_metrics},
  };
  for (const auto& v : vars) {
    const char* text = std::getenv(v.name);
    if (text == nullptr) continue;
    std::uint32_t value = 0;
    if (parse_u32(text, value)) {
      *v.field = value;
    } else if (bad != nullptr) {
      if (!bad->empty()) *bad += ", ";
      *bad += std::string(v.name) + "=" + text;
    }
  }
  if (wait_stack_depth > 16) wait_stack_depth = 16;
  clamp();
}

void region_sizes::clamp() {
  if (statement_stack_depth > kMaxStatementStack) statement_stack_depth = kMaxStatementStack;
  if (max_sql_text_length > kMaxSqlTextLength) max_sql_text_length = kMaxSqlTextLength;
  if (max_classes > kMaxClassesLimit) max_classes = kMaxClassesLimit;
}

}  // namespace pfs
