#include "tools/top/top_source.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace pfs::top {

namespace {

using clock_type = std::chrono::steady_clock;

PGconn* open_connection(const options& o) {
  std::vector<const char*> keys{"fallback_application_name", "connect_timeout"}, values{"pfs_top", "5"};
  for (const auto& [key, value] : o.connection) {
    keys.push_back(key.c_str());
    values.push_back(value.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  return PQconnectdbParams(keys.data(), values.data(), 1);
}

std::string first_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

// libpq's notice receiver: the server's WARNINGs (a damaged region's) kept for
// the next refresh; NOTICEs are not news here.
void on_notice(void* arg, const PGresult* r) {
  const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity == nullptr || std::string(severity) != "WARNING") return;
  static_cast<std::vector<std::string>*>(arg)->push_back(first_line(PQresultErrorMessage(r)));
}

}  // namespace

source::~source() { PQfinish(db_); }

bool source::connect(std::string& error) {
  db_ = open_connection(options_);
  PQsetNoticeReceiver(db_, on_notice, &warnings_new_);  // kept by PQreset
  where_ = std::string(PQhost(db_)) + ":" + PQport(db_) + "/" + PQdb(db_);
  if (PQstatus(db_) == CONNECTION_OK) return true;
  // The screen goes on and retries (refresh says so); batch mode stops.
  error = unreachable_ = first_line(PQerrorMessage(db_));
  retry_at_ = clock_type::now() + std::chrono::seconds(1);
  backoff_ = 2;
  return false;
}

std::string source::where() const { return where_; }

// Connected, or reconnected now; otherwise unreachable_ says so and when the next
// try comes (1 s, doubled up to 30 s).
bool source::usable() {
  if (PQstatus(db_) == CONNECTION_OK) return true;
  const auto now = clock_type::now();
  if (now >= retry_at_) {
    PQreset(db_);
    if (PQstatus(db_) == CONNECTION_OK) {
      unreachable_.clear();
      backoff_ = 1;
      previous_.clear();  // the rates start again
      return true;
    }
    unreachable_ = first_line(PQerrorMessage(db_));
    retry_at_ =
        now + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(backoff_));
    backoff_ = std::min(backoff_ * 2, 30.0);
  }
  return false;
}

refresh_result source::refresh(const view& v) {
  refresh_result out;
  if (!usable()) {
    const double in = std::chrono::duration<double>(retry_at_ - clock_type::now()).count();
    char text[64];
    std::snprintf(text, sizeof text, " (retrying in %.0f s)", std::max(in, 0.0) + 0.49);
    out.unreachable = "the server is unreachable: " + unreachable_ + text;
    return out;
  }
  table now;
  const auto at = clock_type::now();
  if (v.key == '2') out.error = missing_views(db_, options_.sys_schema, options_.schema);
  if (out.error.empty() &&
      !read_rows(db_, view_sql(v, options_.schema, options_.sys_schema), nullptr, now, out.error)) {
    if (PQstatus(db_) != CONNECTION_OK) {
      unreachable_ = out.error;
      retry_at_ = at;
      out.error.clear();
      return refresh(v);
    }
    if (v.key == '6' && out.error.find("process_id") != std::string::npos)
      out.error = "view 6 reads the tables of a region_directory server (they have process_id): " + out.error;
  }
  if (out.error.empty()) {
    const auto old = previous_.find(v.key);
    out.seconds =
        old == previous_.end() ? 0 : std::chrono::duration<double>(at - previous_at_[v.key]).count();
    now = merge_by_key(v, now);  // a directory's tables: one row per key, summed
    out.rows = make_rows(v, now, old == previous_.end() ? nullptr : &old->second, out.seconds);
    previous_[v.key] = std::move(now);
    previous_at_[v.key] = at;
  }
  out.exited = exited_program(db_, options_.schema);
  // The region does not keep when its program ended: the first read that saw it.
  if (out.exited != exited_seen_) {
    exited_seen_ = out.exited;
    const std::time_t t = std::time(nullptr);
    std::tm local{};
    localtime_r(&t, &local);
    char clock[16];
    std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
    exited_at_ = clock;
  }
  if (!out.exited.empty()) out.exited += " (seen at " + exited_at_ + ")";
  for (auto& w : warnings_new_)
    if (std::find(warnings_seen_.begin(), warnings_seen_.end(), w) == warnings_seen_.end()) {
      warnings_seen_.push_back(w);
      out.new_warnings.push_back(w);
    }
  warnings_new_.clear();
  return out;
}

bool source::detail(const view& v, const std::string& key, table& out, std::string& error) {
  const std::string sql = detail_sql(v, options_.schema, options_.sys_schema);
  if (sql.empty()) {
    error = "no detail for this view";
    return false;
  }
  if (!usable()) {
    error = "the server is unreachable: " + unreachable_;
    return false;
  }
  return read_rows(db_, sql, &key, out, error);
}

}  // namespace pfs::top
