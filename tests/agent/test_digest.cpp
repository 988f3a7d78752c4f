// Tests of agent/provider/internal/digest.h: SHA-256, DIGEST_TEXT in MySQL 8.0's style, DIGEST,
// truncation, and hostile input (the exact-size buffers let ASan see any overrun).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "agent/provider/internal/digest.h"

namespace {

using pfs::digest::compute;
using pfs::digest::kHexLength;
using pfs::digest::normalize;
using pfs::digest::sha256_hex;

std::string sha(std::string_view data) {
  char hex[kHexLength + 1];
  sha256_hex(data.data(), data.size(), hex);
  return hex;
}

// DIGEST_TEXT with a buffer of exactly cap bytes on the heap.
std::string text_of(std::string_view sql, std::size_t cap = 4096, bool* truncated = nullptr) {
  auto out = std::make_unique<char[]>(cap);
  bool cut = true;
  const std::size_t n = normalize(sql.data(), sql.size(), out.get(), cap, &cut);
  if (truncated != nullptr) *truncated = cut;
  EXPECT_LT(n, cap);
  EXPECT_EQ(out[n], '\0');
  EXPECT_EQ(std::strlen(out.get()), n);
  return std::string(out.get(), n);
}

// A string literal with its NUL bytes.
template <std::size_t N>
std::string_view bytes(const char (&literal)[N]) {
  return {literal, N - 1};
}

std::string digest_of(std::string_view sql) {
  char text[1024];
  char hex[kHexLength + 1];
  bool truncated = false;
  compute(sql.data(), sql.size(), text, sizeof text, hex, &truncated);
  return hex;
}

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

// ---------------------------------------------------------------- SHA-256

TEST(Sha256, Fips180Vectors) {
  EXPECT_EQ(sha("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 896-bit message of FIPS 180-2 (two blocks after padding).
  EXPECT_EQ(
      sha("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmn"
          "opqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  char hex[kHexLength + 1];
  sha256_hex(nullptr, 0, hex);
  EXPECT_EQ(std::string(hex), sha(""));
}

TEST(Sha256, PaddingLengthsAroundTheBlock) {
  // Known digests of 55, 56, 63 and 64 'a's (the padding edge cases).
  EXPECT_EQ(sha(std::string(55, 'a')), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha(std::string(56, 'a')), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha(std::string(63, 'a')), "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  EXPECT_EQ(sha(std::string(64, 'a')), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
}

// ---------------------------------------------------------------- DIGEST_TEXT

TEST(DigestText, MySQLStyle) {
  EXPECT_EQ(text_of("SELECT * FROM t WHERE id = 42"), "SELECT * FROM `t` WHERE `id` = ?");
  EXPECT_EQ(text_of("  select *\n\tfrom t where id=42 -- why\n"), "SELECT * FROM `t` WHERE `id` = ?");
  EXPECT_EQ(text_of("SELECT a, b FROM t WHERE x IN (1, 2, 3)"),
            "SELECT `a` , `b` FROM `t` WHERE `x` IN (...)");
  EXPECT_EQ(text_of("SELECT a FROM t WHERE x IN (1)"), "SELECT `a` FROM `t` WHERE `x` IN (...)");
  EXPECT_EQ(text_of("SELECT a FROM t WHERE x NOT IN ('a','b')"),
            "SELECT `a` FROM `t` WHERE `x` NOT IN (...)");
  EXPECT_EQ(text_of("SELECT a FROM t WHERE x IN (SELECT y FROM u)"),
            "SELECT `a` FROM `t` WHERE `x` IN ( SELECT `y` FROM `u` )");
  EXPECT_EQ(text_of("INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')"),
            "INSERT INTO `t` VALUES (...) /* , ... */");
  EXPECT_EQ(text_of("INSERT INTO t VALUES (1,'a')"), "INSERT INTO `t` VALUES (...)");
  EXPECT_EQ(text_of("INSERT INTO t VALUES (1)"), "INSERT INTO `t` VALUES (?)");
  EXPECT_EQ(text_of("INSERT INTO t VALUES (1), (2)"), "INSERT INTO `t` VALUES (?) /* , ... */");
  EXPECT_EQ(text_of("INSERT INTO t (a, b) VALUES (?, ?)"), "INSERT INTO `t` ( `a` , `b` ) VALUES (...)");
  EXPECT_EQ(text_of("SELECT 1, 2, 3"), "SELECT ?, ...");
  EXPECT_EQ(text_of("SELECT * FROM t LIMIT 10, 20"), "SELECT * FROM `t` LIMIT ?, ...");
  EXPECT_EQ(text_of("SELECT * FROM t LIMIT 10 OFFSET 5"), "SELECT * FROM `t` LIMIT ? OFFSET ?");
  EXPECT_EQ(text_of("UPDATE t SET a = 'x', b = b + 1 WHERE id = ?"),
            "UPDATE `t` SET `a` = ? , `b` = `b` + ? WHERE `id` = ?");
  EXPECT_EQ(text_of("DELETE FROM t WHERE created < '2024-01-01' ORDER BY id DESC LIMIT 100"),
            "DELETE FROM `t` WHERE `created` < ? ORDER BY `id` DESC LIMIT ?");
  EXPECT_EQ(text_of("begin"), "BEGIN");
  EXPECT_EQ(text_of("START TRANSACTION; "), "START TRANSACTION");
  EXPECT_EQ(text_of("SELECT 1;"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT t.a FROM db.t AS t JOIN u ON u.id = t.id"),
            "SELECT `t` . `a` FROM `db` . `t` AS `t` JOIN `u` ON `u` . `id` = `t` . `id`");
  EXPECT_EQ(text_of("SELECT t.select, t.1x FROM t"), "SELECT `t` . `select` , `t` . `1x` FROM `t`");
}

TEST(DigestText, Literals) {
  EXPECT_EQ(
      text_of("SELECT 0x1F, X'1F', b'101', 0b11, 1.5e-3, .5, 1., 2E10, N'x', 'it''s', \"q\\\"x\", ?, $1"),
      "SELECT ?, ...");
  EXPECT_EQ(text_of("SELECT 'a' 'b'"), "SELECT ? ?");  // two strings: MySQL's grammar joins them
  EXPECT_EQ(text_of("SELECT 123abc, 0x1g, 1e FROM t"), "SELECT `123abc` , `0x1g` , `1e` FROM `t`");
  EXPECT_EQ(text_of("SELECT 0X1F"), "SELECT `0X1F`");  // MySQL: upper-case prefix is an identifier
  EXPECT_EQ(text_of("SELECT _utf8mb4'abc', _latin1 X'41'"), "SELECT (_charset) ? , (_charset) ?");
  EXPECT_EQ(text_of("SELECT _id FROM t"), "SELECT `_id` FROM `t`");
  EXPECT_EQ(text_of("SELECT TRUE, FALSE"), "SELECT TRUE , FALSE");
  EXPECT_EQ(text_of("SELECT a FROM t WHERE b IS NULL AND c IS NOT NULL AND d = NULL"),
            "SELECT `a` FROM `t` WHERE `b` IS NULL AND `c` IS NOT NULL AND `d` = ?");
  EXPECT_EQ(text_of("INSERT INTO t VALUES (NULL, 1)"), "INSERT INTO `t` VALUES (...)");
  EXPECT_EQ(text_of("CREATE TABLE t (a INT NOT NULL DEFAULT 0, b TEXT DEFAULT NULL)"),
            "CREATE TABLE `t` ( `a` INT NOT NULL DEFAULT ? , `b` TEXT DEFAULT ? )");
  EXPECT_EQ(text_of("SELECT DATE '2024-01-01'"), "SELECT DATE ?");
}

TEST(DigestText, UnarySignsAsMySQL) {
  EXPECT_EQ(text_of("SELECT -1"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT - - 1, +2"), "SELECT ?, ...");
  EXPECT_EQ(text_of("SELECT a - 1 FROM t"), "SELECT `a` - ? FROM `t`");
  EXPECT_EQ(text_of("SELECT 5 - -3"), "SELECT ? - ?");
  EXPECT_EQ(text_of("SELECT (-1)"), "SELECT (?)");
  EXPECT_EQ(text_of("SELECT * FROM t WHERE a IN (-1, +2, 3)"), "SELECT * FROM `t` WHERE `a` IN (...)");
  EXPECT_EQ(text_of("SELECT * FROM t WHERE a > 1 AND b < -2"),
            "SELECT * FROM `t` WHERE `a` > ? AND `b` < - ?");
  EXPECT_EQ(text_of("SELECT * FROM t WHERE a = 1 OR -2"), "SELECT * FROM `t` WHERE `a` = ? OR ?");
  EXPECT_EQ(text_of("SELECT * FROM t WHERE a = -'x'"),
            "SELECT * FROM `t` WHERE `a` = - ?");  // strings: no fold
}

TEST(DigestText, KeywordsFunctionsAndOperators) {
  EXPECT_EQ(text_of("SELECT COUNT(*), sum(x), Max(y) FROM t GROUP BY z HAVING count(*) > 1"),
            "SELECT COUNT ( * ) , SUM ( `x` ) , MAX ( `y` ) FROM `t` GROUP BY `z` HAVING COUNT ( * ) > ?");
  EXPECT_EQ(text_of("SELECT count (*), count FROM t"), "SELECT `count` ( * ) , `count` FROM `t`");
  EXPECT_EQ(text_of("SELECT concat(a, 'x'), concat('a', 'b'), f((1))"),
            "SELECT `concat` ( `a` , ? ) , `concat` (...) , `f` ( (?) )");
  EXPECT_EQ(text_of("SELECT status, Name FROM t"), "SELECT STATUS , `Name` FROM `t`");
  EXPECT_EQ(text_of("SELECT @@version, @@session.sql_mode"), "SELECT @@`version` , @@SESSION . `sql_mode`");
  EXPECT_EQ(text_of("SET @a := 1"), "SET @`a` := ?");
  EXPECT_EQ(text_of("SELECT a FROM t WHERE a <> 1 AND b <=> 2 AND c >= 3 OR d || e && f"),
            "SELECT `a` FROM `t` WHERE `a` != ? AND `b` <=> ? AND `c` >= ? OR `d` || `e` && `f`");
  EXPECT_EQ(text_of("SELECT j->>'$.a', j->'$.b' FROM t"), "SELECT `j` ->> ? , `j` -> ? FROM `t`");
  EXPECT_EQ(text_of("SELECT * FROM t FOR SHARE"), "SELECT * FROM `t` FOR SHARE");
  EXPECT_EQ(text_of("select * from t for update skip locked"), "SELECT * FROM `t` FOR UPDATE SKIP LOCKED");
  EXPECT_EQ(text_of("CALL p(1, 'a')"), "CALL `p` (...)");
}

TEST(DigestText, QuotedIdentifiersAndComments) {
  EXPECT_EQ(text_of("SELECT * FROM `my table` WHERE `a``b` = 1"), "SELECT * FROM `my table` WHERE `a`b` = ?");
  EXPECT_EQ(text_of("SELECT `` FROM t"), "SELECT FROM `t`");  // MySQL prints nothing for it
  EXPECT_EQ(text_of("SELECT /* c */ a /*+ BKA(t) */ FROM t # end"), "SELECT `a` FROM `t`");
  EXPECT_EQ(text_of("SELECT 1 --1"), "SELECT ? - ?");  // "--" without a space: two signs, one folded
  EXPECT_EQ(text_of("SELECT 1 --"), "SELECT ?");
  EXPECT_EQ(text_of("/*!40101 SET NAMES utf8 */;"), "SET NAMES `utf8`");
  EXPECT_EQ(text_of("SELECT /*! STRAIGHT_JOIN */ a FROM t"), "SELECT STRAIGHT_JOIN `a` FROM `t`");
  EXPECT_EQ(text_of("SELECT * FROM t WHERE name = 'ünï' AND `ünï` = 1"),
            "SELECT * FROM `t` WHERE `name` = ? AND `ünï` = ?");
}

TEST(Digest, SameForLiteralsWhitespaceCommentsCaseAndListLength) {
  const std::string reference = digest_of("SELECT * FROM t WHERE id = 1 AND x IN (1, 2)");
  EXPECT_EQ(digest_of("select *  from t where id=999 and x in ('a','b','c','d') -- note"), reference);
  EXPECT_EQ(digest_of("SELECT\n*\nFROM t /* hi */ WHERE id = 5 AND x IN (7)"), reference);
  EXPECT_EQ(digest_of("SeLeCt * FrOm t WhErE id = ? AnD x In (?, ?, ?)"), reference);
  EXPECT_EQ(digest_of("INSERT INTO t VALUES (1,'a'),(2,'b')"),
            digest_of("insert into t values (2,'bb'),(3,'c'),(4,'d')"));
  EXPECT_EQ(digest_of("SELECT a FROM t WHERE b <> 1"), digest_of("SELECT a FROM t WHERE b != 2"));
}

TEST(Digest, DifferentForDifferentStructure) {
  const std::string reference = digest_of("SELECT * FROM t WHERE id = 1");
  EXPECT_NE(digest_of("SELECT * FROM u WHERE id = 1"), reference);
  EXPECT_NE(digest_of("SELECT * FROM t WHERE idx = 1"), reference);
  EXPECT_NE(digest_of("SELECT * FROM t WHERE id > 1"), reference);
  EXPECT_NE(digest_of("SELECT * FROM t WHERE id = 1 AND a = 2"), reference);
  EXPECT_NE(digest_of("SELECT * FROM T WHERE id = 1"), reference);  // identifiers keep their case
  EXPECT_NE(digest_of("INSERT INTO t VALUES (1)"), digest_of("INSERT INTO t VALUES (1, 2)"));
  EXPECT_NE(digest_of("INSERT INTO t VALUES (1)"), digest_of("INSERT INTO t VALUES (1), (2)"));
}

TEST(Digest, IsTheHashOfTheNormalizedText) {
  const std::string sql = "select a,b from t where c in (1,2,3) and d like 'x%' order by a";
  EXPECT_EQ(digest_of(sql), sha(text_of(sql)));
  EXPECT_EQ(digest_of(""), sha(""));
  // Long text: the hash is fed in many small pieces.
  std::string long_sql = "SELECT ";
  for (int i = 0; i < 2000; ++i) long_sql += "col" + std::to_string(i) + " + " + std::to_string(i) + ", ";
  long_sql += "x FROM t";
  EXPECT_EQ(digest_of(long_sql), sha(text_of(long_sql, 1 << 20)));
}

// ---------------------------------------------------------------- truncation

TEST(DigestText, TruncationMarker) {
  const std::string sql = "SELECT * FROM t WHERE id = 42";
  const std::string full = "SELECT * FROM `t` WHERE `id` = ?";
  bool truncated = true;
  EXPECT_EQ(text_of(sql, full.size() + 1, &truncated), full);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(text_of(sql, full.size(), &truncated), full.substr(0, full.size() - 4) + "...");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(text_of(sql, 10, &truncated), "SELECT...");
  EXPECT_TRUE(truncated);
  EXPECT_EQ(text_of(sql, 4, &truncated), "...");
  EXPECT_EQ(text_of(sql, 3, &truncated), "..");
  EXPECT_EQ(text_of(sql, 2, &truncated), ".");
  EXPECT_EQ(text_of(sql, 1, &truncated), "");
  EXPECT_TRUE(truncated);

  EXPECT_EQ(normalize(sql.data(), sql.size(), nullptr, 0, &truncated), 0U);
  EXPECT_TRUE(truncated);
  EXPECT_EQ(normalize("", 0, nullptr, 0, &truncated), 0U);
  EXPECT_FALSE(truncated);
  EXPECT_EQ(normalize(sql.data(), sql.size(), nullptr, 0, nullptr), 0U);  // truncated may be null
}

TEST(DigestText, TruncationKeepsWholeCharacters) {
  // "SELECT `é" is 10 bytes; the é (2 bytes) must not be split by the marker.
  const std::string sql = "SELECT `éé` FROM t";
  for (std::size_t cap = 1; cap < 24; ++cap) {
    bool truncated = false;
    const std::string text = text_of(sql, cap, &truncated);
    EXPECT_TRUE(valid_utf8(text)) << cap << ": " << text;
  }
  EXPECT_EQ(text_of(sql, 12), "SELECT `...");
}

TEST(Digest, HashIgnoresTheTextCap) {
  const std::string sql = "SELECT a, b, c FROM some_table WHERE x = 1 AND y IN (1, 2, 3) ORDER BY a";
  const std::string expected = sha(text_of(sql));
  const std::size_t caps[] = {0, 1, 5, 16, 40, 4096};
  for (std::size_t cap : caps) {
    auto out = std::make_unique<char[]>(cap);
    char hex[kHexLength + 1];
    bool truncated = false;
    compute(sql.data(), sql.size(), cap ? out.get() : nullptr, cap, hex, &truncated);
    EXPECT_EQ(std::string(hex), expected) << cap;
    EXPECT_EQ(truncated, cap < 4096) << cap;
  }
}

// ---------------------------------------------------------------- hostile input

TEST(DigestText, HostileInputStaysSane) {
  EXPECT_EQ(text_of("SELECT 'abc"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT 'abc\\"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT \"abc''"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT 1 /* abc"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT 1 /*"), "SELECT ?");
  EXPECT_EQ(text_of("SELECT 1 /*/"), "SELECT ?");
  EXPECT_EQ(text_of("/*!"), "");
  EXPECT_EQ(text_of("SELECT `abc"), "SELECT `abc`");
  EXPECT_EQ(text_of("SELECT `a``"), "SELECT `a``");
  EXPECT_EQ(text_of("SELECT X'12"), "SELECT ?");
  EXPECT_EQ(text_of(bytes("SELECT\0 1 FROM t")), "SELECT ? FROM `t`");
  EXPECT_EQ(text_of(bytes("SELECT `a\0b`, 'x\0y'")), "SELECT `a?b` , ?");
  EXPECT_EQ(text_of("SELECT \xff\xfe, caf\xc3\xa9, \xc3 FROM t"),
            "SELECT `??` , `caf\xc3\xa9` , `?` FROM `t`");
  EXPECT_EQ(text_of("SELECT \xed\xa0\x80, \xf4\x90\x80\x80, \xe0\x80\x80"), "SELECT `???` , `????` , `???`");
  EXPECT_EQ(text_of(")))"), ") ) )");
  EXPECT_EQ(text_of(",,,"), ", , ,");
  EXPECT_EQ(text_of("   \t\n "), "");

  // 0-length text, with and without a pointer.
  char out[8];
  char hex[kHexLength + 1];
  bool truncated = true;
  EXPECT_EQ(normalize(nullptr, 0, out, sizeof out, &truncated), 0U);
  EXPECT_EQ(out[0], '\0');
  EXPECT_FALSE(truncated);
  compute(nullptr, 0, out, sizeof out, hex, &truncated);
  EXPECT_EQ(std::string(hex), sha(""));
  EXPECT_EQ(text_of(std::string_view("x", 0)), "");
}

TEST(DigestText, HugeNestingAndRuns) {
  constexpr std::size_t kMiB = 1 << 20;
  for (char c : {'(', ')', '-', ',', '`', '\'', '1', '?', 'a'}) {
    const std::string sql(kMiB, c);
    bool truncated = false;
    const std::string text = text_of(sql, 1024, &truncated);
    EXPECT_LE(text.size(), 1023U) << c;
    EXPECT_TRUE(valid_utf8(text)) << c;
    char hex[kHexLength + 1];
    char shown[64];
    compute(sql.data(), sql.size(), shown, sizeof shown, hex, &truncated);
    EXPECT_EQ(std::strlen(hex), kHexLength) << c;
  }
  EXPECT_EQ(text_of(std::string(kMiB, '('), 16), "( ( ( ( ( ( ...");
  // Signs folded over a long run, then (...).
  std::string signs = "SELECT * FROM t WHERE a IN (" + std::string(100, '-') + "1, 2)";
  EXPECT_EQ(text_of(signs), "SELECT * FROM `t` WHERE `a` IN (...)");
  // Deep but balanced nesting of one literal.
  std::string nested = "SELECT " + std::string(1000, '(') + "1" + std::string(1000, ')');
  std::string expected = "SELECT ";
  for (int i = 0; i < 999; ++i) expected += "( ";
  expected += "(?)";
  for (int i = 0; i < 999; ++i) expected += " )";
  EXPECT_EQ(text_of(nested, 1 << 16), expected);
  std::string many_rows = "INSERT INTO t VALUES (1, 'a')";
  for (int i = 0; i < 100000; ++i) many_rows += ", (2, 'b')";
  EXPECT_EQ(text_of(many_rows), "INSERT INTO `t` VALUES (...) /* , ... */");
}

TEST(DigestText, RandomBytesNeverOverrun) {
  std::mt19937_64 random(42);
  const std::string_view alphabet = bytes("()-+,;'\"`/*#!@.?$0123456789xXbBnNeE_aZ \t\n\\\xc3\xa9\xff\0");
  for (int round = 0; round < 20000; ++round) {
    const std::size_t len = random() % 64;
    std::string sql(len, ' ');
    for (char& c : sql) {
      c = round % 2 == 0 ? static_cast<char>(random() % 256) : alphabet[random() % alphabet.size()];
    }
    const std::size_t cap = random() % 48;
    auto out = std::make_unique<char[]>(cap);  // exactly cap bytes: ASan sees an overrun
    char hex[kHexLength + 1];
    bool truncated = false;
    compute(sql.data(), sql.size(), cap ? out.get() : nullptr, cap, hex, &truncated);
    const std::string full = text_of(sql, 1 << 12);
    ASSERT_EQ(std::string(hex), sha(full)) << round;
    ASSERT_TRUE(valid_utf8(full)) << round;
    if (cap == 0) continue;
    const std::size_t n = std::strlen(out.get());
    ASSERT_LT(n, cap) << round;
    ASSERT_EQ(truncated, full.size() > cap - 1) << round;
    if (!truncated) {
      ASSERT_EQ(std::string(out.get(), n), full) << round;
    } else {
      ASSERT_TRUE(valid_utf8(std::string(out.get(), n))) << round;
    }
  }
}

}  // namespace
