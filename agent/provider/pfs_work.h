// Units of work in the C++ API: statements, stages, transactions and idle waits
// as scopes (RAII), on the C ABI of pfs_c.h.
//
//   static pfs::statement_class request{"app", "request"};  // statement/app/request
//   static pfs::stage_class parse{"app", "parse"};          // stage/app/parse
//   {
//     pfs::statement s(request, "shop");  // CURRENT_SCHEMA 'shop'
//     s.text("SELECT * FROM orders WHERE id = 42");
//     { pfs::stage st(parse); ... }      // waits here nest in the stage
//     s.rows(0, 1, 1);
//   }                                    // the statement ends
//
// Everything is a no-op (one branch) when the agent is off or the class disabled.
#pragma once

#include <cstdint>
#include <string_view>

#include "agent/provider/class_flags.h"
#include "agent/provider/pfs_c.h"
#include "agent/provider/source_location.h"

namespace pfs {

// A class keeps a pointer to its flags byte, so that a disabled class costs one
// load and one branch, without a call.
class statement_class {
 public:
  statement_class(const char* category, const char* name)
      : key_(pfs_register_statement(category, name)), flags_(pfs_class_flags(key_)) {}
  pfs_key key() const { return key_; }
  bool enabled() const { return detail::class_enabled(flags_); }

 private:
  pfs_key key_;
  const volatile unsigned char* flags_;
};

class stage_class {
 public:
  stage_class(const char* category, const char* name)
      : key_(pfs_register_stage(category, name)), flags_(pfs_class_flags(key_)) {}
  pfs_key key() const { return key_; }
  bool enabled() const { return detail::class_enabled(flags_); }

 private:
  pfs_key key_;
  const volatile unsigned char* flags_;
};

// One statement of the calling thread, from construction to end() or destruction.
class statement {
 public:
  explicit statement(const statement_class& c, const char* schema = nullptr,
                     pfs::source_location at = pfs::source_location::current())
      : level_(c.enabled() ? pfs_statement_start(c.key(), schema, at.file_name(), at.line()) : 0) {}
  ~statement() { end(); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  // SQL_TEXT; the agent derives DIGEST and DIGEST_TEXT from it.
  void text(std::string_view sql) {
    if (level_ != 0) pfs_statement_set_text(sql.data(), sql.size());
  }
  // A text already normalized by the program (DIGEST_TEXT as given).
  void digest_text(std::string_view normalized) {
    if (level_ != 0) pfs_statement_set_digest_text(normalized.data(), normalized.size());
  }
  void rows(std::uint64_t affected, std::uint64_t sent, std::uint64_t examined) {
    if (level_ != 0) pfs_statement_set_rows(affected, sent, examined);
  }
  void error(unsigned mysql_errno, const char* sqlstate = nullptr, const char* message = nullptr) {
    if (level_ != 0) pfs_statement_set_error(mysql_errno, sqlstate, message);
  }
  void warnings(unsigned count) {
    if (level_ != 0) pfs_statement_add_warnings(count);
  }
  // The caller's W3C trace context as the request carried it ("00-<trace id>-<parent
  // span id>-<flags>"): TRACE_ID and PARENT_SPAN_ID, beyond MySQL; an invalid one
  // is ignored. Call it while this statement is the innermost running one.
  void traceparent(const char* header) {
    if (level_ != 0) pfs_statement_set_traceparent(header);
  }
  void end() {
    if (level_ != 0) pfs_statement_end(level_);
    level_ = 0;
  }
  bool recorded() const { return level_ != 0; }

 private:
  int level_;
};

// A stage of the calling thread. A stage started later ends this one (MySQL's
// rule); the destructor then does nothing.
class stage {
 public:
  explicit stage(const stage_class& c, pfs::source_location at = pfs::source_location::current())
      : event_id_(c.enabled() ? pfs_stage_start(c.key(), at.file_name(), at.line()) : 0) {}
  ~stage() { end(); }
  stage(const stage&) = delete;
  stage& operator=(const stage&) = delete;
  void progress(std::uint64_t completed, std::uint64_t estimated) {
    if (event_id_ != 0) pfs_stage_set_progress(completed, estimated);
  }
  void end() {
    if (event_id_ != 0) pfs_stage_end_event(event_id_);
    event_id_ = 0;
  }

 private:
  std::uint64_t event_id_;
};

// Moves the thread to a stage without a scope (MySQL's THD_STAGE_INFO).
inline void set_stage(const stage_class& c, pfs::source_location at = pfs::source_location::current()) {
  pfs_stage_start(c.key(), at.file_name(), at.line());
}

enum class isolation { read_uncommitted = 1, read_committed = 2, repeatable_read = 3, serializable = 4 };

// A transaction of the calling thread: commit() or rollback(); destroyed while
// still active, it counts as rolled back.
class transaction {
 public:
  explicit transaction(bool read_only = false, isolation level = isolation::repeatable_read,
                       bool autocommit = false, pfs::source_location at = pfs::source_location::current())
      : active_(pfs_transaction_start(read_only ? 1 : 0, static_cast<int>(level), autocommit ? 1 : 0,
                                      at.file_name(), at.line()) != 0) {}
  ~transaction() {
    if (active_) pfs_transaction_end(0);
  }
  transaction(const transaction&) = delete;
  transaction& operator=(const transaction&) = delete;
  void gtid(const char* g) {
    if (active_) pfs_transaction_set_gtid(g);
  }
  void trx_id(std::uint64_t id) {
    if (active_) pfs_transaction_set_trx_id(id);
  }
  // The caller's W3C trace context (statement::traceparent).
  void traceparent(const char* header) {
    if (active_) pfs_transaction_set_traceparent(header);
  }
  void savepoint() {
    if (active_) pfs_transaction_savepoint(PFS_SAVEPOINT);
  }
  void rollback_to_savepoint() {
    if (active_) pfs_transaction_savepoint(PFS_ROLLBACK_TO_SAVEPOINT);
  }
  void release_savepoint() {
    if (active_) pfs_transaction_savepoint(PFS_RELEASE_SAVEPOINT);
  }
  void commit() { finish(1); }
  void rollback() { finish(0); }

 private:
  void finish(int committed) {
    if (active_) pfs_transaction_end(committed);
    active_ = false;
  }
  bool active_;
};

// The calling thread waits for work (between requests): an 'idle' wait.
class idle_wait {
 public:
  explicit idle_wait(pfs::source_location at = pfs::source_location::current())
      : recording_(pfs_start_idle_wait(&locker_, at.file_name(), at.line()) != 0) {}
  ~idle_wait() {
    if (recording_) pfs_end_idle_wait(&locker_);
  }
  idle_wait(const idle_wait&) = delete;
  idle_wait& operator=(const idle_wait&) = delete;

 private:
  pfs_wait_locker locker_;
  bool recording_;
};

// threads.PROCESSLIST_ID and CONNECTION_TYPE of the calling thread.
inline void set_thread_connection(std::uint64_t processlist_id, int connection_type = PFS_CONNECTION_TCP) {
  pfs_set_thread_connection(processlist_id, connection_type);
}

}  // namespace pfs
