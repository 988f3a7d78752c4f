// TLS channels end to end: channels registered through the C ABI and the C++ API,
// their properties set and rewritten, read back exactly from tls_channel_status
// (registration order, two channels of one name), a reader scanning while a
// thread rewrites a value (never a torn value), unregister removing the rows,
// properties beyond PFS_MAX_TLS_PROPERTIES counted as lost, long values cut and
// bad arguments ignored.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_tls.h"
#include "agent/reader/reader.h"
#include "agent/region/tls_layout.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;
using pfs::test::status_value;

options tls_options(const char* tag, std::uint32_t max_properties = 16) {
  options o = small_options(tag);
  o.sizes.max_tls_properties = max_properties;
  return o;
}

// The table as "channel/property=value" lines, in its order.
std::vector<std::string> rows() {
  std::vector<std::string> out;
  for (const auto& r : scan("tls_channel_status"))
    out.push_back(S(r, "channel") + "/" + S(r, "property") + "=" + S(r, "value"));
  return out;
}
using L = std::vector<std::string>;

TEST(Tls, PropertiesAreShownInRegistrationOrderAndRewrittenInPlace) {
  in_child([] {
    ASSERT_TRUE(init(tls_options("tls_order")));
    pfs_tls_channel* main_channel = pfs_register_tls_channel("mysql_main");
    ASSERT_NE(main_channel, nullptr);
    EXPECT_EQ(pfs_tls_channel_set(main_channel, "Ssl_accepts", "0"), 1);
    EXPECT_EQ(pfs_tls_channel_set(main_channel, "Current_tls_version", "TLSv1.2,TLSv1.3"), 1);
    // Two channels may share a name (MySQL's mysql_main on two contexts).
    tls_channel other{"mysql_main"};
    ASSERT_TRUE(other.registered());
    EXPECT_TRUE(other.set("Ssl_accepts", std::string("7")));
    tls_channel admin{"mysql_admin"};
    EXPECT_TRUE(admin.set("Current_tls_cipher", ""));                      // an empty value is a value
    EXPECT_EQ(pfs_tls_channel_set(main_channel, "Ssl_accepts", "12"), 1);  // the same row
    EXPECT_EQ(pfs_tls_channel_set(main_channel, "Ssl_ctx_verify_depth", nullptr), 1);
    EXPECT_EQ(rows(), (L{"mysql_main/Ssl_accepts=12", "mysql_main/Current_tls_version=TLSv1.2,TLSv1.3",
                         "mysql_main/Ssl_ctx_verify_depth=", "mysql_main/Ssl_accepts=7",
                         "mysql_admin/Current_tls_cipher="}));
    EXPECT_EQ(status_value("tls_properties_lost"), 0);
    pfs_unregister_tls_channel(main_channel);
    EXPECT_EQ(rows(), (L{"mysql_main/Ssl_accepts=7", "mysql_admin/Current_tls_cipher="}));
    // The records freed are taken again, the newer channel's rows after the older's.
    tls_channel late{"late"};
    EXPECT_TRUE(late.set("Ssl_accepts", "1"));
    EXPECT_TRUE(late.set("Ssl_finished_accepts", "1"));
    EXPECT_TRUE(other.set("Ssl_finished_accepts", "6"));
    EXPECT_EQ(rows(),
              (L{"mysql_main/Ssl_accepts=7", "mysql_main/Ssl_finished_accepts=6",
                 "mysql_admin/Current_tls_cipher=", "late/Ssl_accepts=1", "late/Ssl_finished_accepts=1"}));
  });
}

TEST(Tls, TheRowsGoWithTheChannel) {
  in_child([] {
    ASSERT_TRUE(init(tls_options("tls_raii")));
    {
      tls_channel c{"scoped"};
      for (int i = 0; i < 5; ++i) EXPECT_TRUE(c.set(("P" + std::to_string(i)).c_str(), std::to_string(i)));
      EXPECT_EQ(rows().size(), 5u);
    }
    EXPECT_TRUE(rows().empty());
  });
}

TEST(Tls, PropertiesBeyondTheTableAreLostAndNotShown) {
  in_child([] {
    ASSERT_TRUE(init(tls_options("tls_lost", 3)));
    tls_channel a{"a"};
    tls_channel b{"b"};
    EXPECT_TRUE(a.set("P1", "1"));
    EXPECT_TRUE(a.set("P2", "2"));
    EXPECT_TRUE(b.set("P1", "3"));
    EXPECT_FALSE(b.set("P2", "4"));
    EXPECT_FALSE(a.set("P3", "5"));
    EXPECT_TRUE(a.set("P1", "one"));  // an existing row is still rewritten
    EXPECT_EQ(rows(), (L{"a/P1=one", "a/P2=2", "b/P1=3"}));
    EXPECT_EQ(status_value("tls_properties_lost"), 2);
  });
}

TEST(Tls, LongValuesAreCutAndBadArgumentsIgnored) {
  in_child([] {
    ASSERT_TRUE(init(tls_options("tls_args")));
    EXPECT_EQ(pfs_register_tls_channel(nullptr), nullptr);
    EXPECT_EQ(pfs_register_tls_channel(""), nullptr);
    EXPECT_EQ(pfs_register_tls_channel(std::string(layout::kTlsChannelLen, 'c').c_str()), nullptr);
    const std::string longest_name(layout::kTlsChannelLen - 1, 'c');
    tls_channel c{longest_name.c_str()};
    ASSERT_TRUE(c.registered());
    EXPECT_EQ(pfs_tls_channel_set(nullptr, "P", "v"), 0);
    EXPECT_FALSE(c.set(nullptr, "v"));
    EXPECT_FALSE(c.set("", "v"));
    EXPECT_FALSE(c.set(std::string(layout::kTlsPropertyLen, 'p').c_str(), "v"));
    EXPECT_TRUE(c.set("Current_tls_ca", std::string(5000, 'v')));
    pfs_unregister_tls_channel(nullptr);
    const auto r = scan("tls_channel_status");
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(S(r[0], "channel"), longest_name);
    EXPECT_EQ(S(r[0], "value"), std::string(layout::kTlsValueLen - 1, 'v'));
    EXPECT_EQ(status_value("tls_properties_lost"), 0);  // refused arguments are not lost rows
    // A shorter value over a long one: the old bytes past it are not shown.
    EXPECT_TRUE(c.set("Current_tls_ca", "ca.pem"));
    EXPECT_EQ(S(scan("tls_channel_status")[0], "value"), "ca.pem");
  });
}

TEST(Tls, AReaderNeverSeesATornValue) {
  in_child([] {
    ASSERT_TRUE(init(tls_options("tls_torn")));
    tls_channel c{"busy"};
    const std::string a(1000, 'a'), b(600, 'b');
    ASSERT_TRUE(c.set("Ssl_accepts", a));
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> writes{0};
    std::thread writer([&] {
      for (std::uint64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        c.set("Ssl_accepts", (i & 1) != 0 ? b : a);
        writes.fetch_add(1, std::memory_order_relaxed);
        // Bursts of writes with short pauses: reads overlap writes often, yet a
        // loaded two-core machine still gives the reader stable moments to show.
        if (i % 64 == 63) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    std::uint64_t scans = 0, seen_a = 0, seen_b = 0;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
    while (std::chrono::steady_clock::now() < until) {
      for (const auto& r : scan("tls_channel_status")) {
        const std::string v = S(r, "value");
        if (v == a) {
          ++seen_a;
        } else if (v == b) {
          ++seen_b;
        } else {
          ADD_FAILURE() << "torn value of " << v.size() << " bytes";
        }
      }
      ++scans;
    }
    stop = true;
    writer.join();
    EXPECT_GT(writes.load(), 100u);
    EXPECT_GT(scans, 10u);
    // A row kept changing is skipped (counted as torn), never shown half-written.
    EXPECT_GT(seen_a + seen_b, 0u);
  });
}

}  // namespace
