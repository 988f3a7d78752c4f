// Statement digests (DIGEST_TEXT, DIGEST): see digest.h.
#include "agent/provider/internal/digest.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>

#include "agent/provider/internal/sha256.h"

namespace pfs::digest {
namespace {

void write_hex(sha256& hash, char out[kHexLength + 1]) noexcept {
  static constexpr char kDigits[] = "0123456789abcdef";
  unsigned char digest[32];
  hash.finish(digest);
  for (int i = 0; i < 32; ++i) {
    out[2 * i] = kDigits[digest[i] >> 4];
    out[2 * i + 1] = kDigits[digest[i] & 0xf];
  }
  out[kHexLength] = '\0';
}

// ---------------------------------------------------------------- output

// The normalized text goes to the caller's buffer (as much as fits) and to the hash
// (all of it). Tokens are separated by one space, written before the next token so
// that the text never ends with a space (MySQL's add_space).
class sink {
 public:
  sink(char* out, std::size_t cap, sha256* hash) noexcept
      : out_(out), cap_(cap), room_(cap > 0 ? cap - 1 : 0), hash_(hash) {}

  void begin_token() noexcept {
    if (space_pending_) put(" ", 1);
    space_pending_ = false;
  }
  void end_token(bool space_after) noexcept { space_pending_ = space_after; }
  void token(std::string_view text, bool space_after = true) noexcept {
    begin_token();
    put(text.data(), text.size());
    end_token(space_after);
  }

  void put(const char* bytes, std::size_t n) noexcept {
    if (n == 0) return;
    if (hash_ != nullptr) hash_->update(bytes, n);
    if (length_ < room_) std::memcpy(out_ + length_, bytes, std::min(n, room_ - length_));
    length_ += n;
  }

  // NUL-terminates, marks a truncation with "...", returns the length written.
  std::size_t finish(bool* truncated) noexcept {
    const bool cut = length_ > room_;
    if (truncated != nullptr) *truncated = cut;
    if (cap_ == 0) return 0;
    if (!cut) {
      out_[length_] = '\0';
      return length_;
    }
    constexpr std::string_view kMarker = "...";
    std::size_t keep = room_ >= kMarker.size() ? room_ - kMarker.size() : 0;
    // Do not leave the start of a UTF-8 sequence whose rest the marker overwrites.
    while (keep > 0 && (static_cast<unsigned char>(out_[keep]) & 0xC0) == 0x80) --keep;
    const std::size_t marker = std::min(kMarker.size(), room_);
    std::memcpy(out_ + keep, kMarker.data(), marker);
    out_[keep + marker] = '\0';
    return keep + marker;
  }

 private:
  char* out_;
  std::size_t cap_;
  std::size_t room_;  // bytes of text that fit before the NUL
  sha256* hash_;
  std::size_t length_ = 0;  // of the whole normalized text
  bool space_pending_ = false;
};

// ---------------------------------------------------------------- MySQL's token stack

// The tokens MySQL's reductions look at or take back (sql_digest.cc, digest_add_token),
// and the digest tokens they produce. Every other token is written out at once.
enum class tok : std::uint8_t {
  lparen,
  comma,
  plus,
  minus,
  semicolon,
  in,
  value,            // TOK_GENERIC_VALUE
  value_list,       // TOK_GENERIC_VALUE_LIST
  row_single,       // TOK_ROW_SINGLE_VALUE
  row_single_list,  // TOK_ROW_SINGLE_VALUE_LIST
  row_multi,        // TOK_ROW_MULTIPLE_VALUE
  row_multi_list,   // TOK_ROW_MULTIPLE_VALUE_LIST
  in_values,        // TOK_IN_GENERIC_VALUE_EXPRESSION
  outside,          // what peek() returns below the stack: matches nothing
};

constexpr std::string_view spelling(tok t) noexcept {
  switch (t) {
    case tok::lparen:
      return "(";
    case tok::comma:
      return ",";
    case tok::plus:
      return "+";
    case tok::minus:
      return "-";
    case tok::semicolon:
      return ";";
    case tok::in:
      return "IN";
    case tok::value:
      return "?";
    case tok::value_list:
      return "?, ...";
    case tok::row_single:
      return "(?)";
    case tok::row_single_list:
      return "(?) /* , ... */";
    case tok::row_multi:
      return "(...)";
    case tok::row_multi_list:
      return "(...) /* , ... */";
    case tok::in_values:
      return "IN (...)";
    case tok::outside:
      break;
  }
  return "";
}

// MySQL's m_start_expr (gen_lex_token.cc) for the tokens kept on the stack.
constexpr bool starts_expression(tok t) noexcept {
  return t == tok::lparen || t == tok::comma || t == tok::plus || t == tok::minus;
}

// The top of MySQL's token array, as far as a reduction can reach. A token written
// out (an identifier, a keyword, an operator, an unreduced ')') can never be taken
// back, so the stack only holds what is above the last of them; of that one, only
// whether it starts an expression matters (identifiers do not: MySQL's reductions do
// not look past the last identifier). The stack is bounded: when full, its lower half
// is written out, which only a run of more than half its size of unary signs notices.
class token_stack {
 public:
  explicit token_stack(sink& out) noexcept : out_(out) {}

  tok peek(std::size_t depth) const noexcept {
    return depth < size_ ? items_[size_ - 1 - depth] : tok::outside;
  }
  bool starts_expression_at(std::size_t depth) const noexcept {
    if (depth < size_) return starts_expression(items_[size_ - 1 - depth]);
    return depth == size_ && below_starts_expression_;
  }
  // Only after a peek() at that depth matched a stacked token.
  void pop(std::size_t n) noexcept { size_ -= n; }
  void push(tok t) noexcept {
    if (size_ == kCapacity) write_bottom(kCapacity / 2);
    items_[size_++] = t;
  }
  // Writes the whole stack out before a token that stays: the caller writes it next.
  void settle(bool next_starts_expression) noexcept {
    write_bottom(size_);
    below_starts_expression_ = next_starts_expression;
  }

 private:
  void write_bottom(std::size_t n) noexcept {
    if (n == 0) return;
    for (std::size_t i = 0; i < n; ++i) out_.token(spelling(items_[i]));
    below_starts_expression_ = starts_expression(items_[n - 1]);
    std::memmove(items_, items_ + n, size_ - n);
    size_ -= n;
  }

  static constexpr std::size_t kCapacity = 256;
  sink& out_;
  tok items_[kCapacity];
  std::size_t size_ = 0;
  bool below_starts_expression_ = false;
};

// ---------------------------------------------------------------- keywords

enum keyword_flags : std::uint8_t {
  kPlain = 0,
  kStartsExpression = 1,  // MySQL's m_start_expr: a sign after it is unary
  kFunction = 2,          // a keyword only right before '(' (lex.h SG_FUNCTIONS)
  kIn = 4,
  kNull = 8,
  kIs = 16,
  kNot = 32,
};

struct keyword {
  std::string_view name;
  std::uint8_t flags = kPlain;
};

// MySQL 8.0 keywords (sql/lex.h), the common ones. A word missing here is shown as an
// identifier, where MySQL shows it upper-cased.
constexpr keyword kKeywordList[] = {
#include "agent/provider/internal/digest_keywords.inc"
};

constexpr std::size_t kKeywordCount = std::size(kKeywordList);

constexpr std::size_t kLongestKeyword = [] {
  std::size_t longest = 0;
  for (const keyword& k : kKeywordList) longest = std::max(longest, k.name.size());
  return longest;
}();

// FNV-1a of the upper-cased word.
constexpr std::uint32_t fold(std::uint32_t hash, unsigned char c) noexcept { return (hash ^ c) * 16777619U; }
constexpr std::uint32_t kHashSeed = 2166136261U;

// Open addressing, linear probing, at most a quarter full: a word is found (or not)
// after one or two slots, with no comparison against the other keywords.
constexpr std::size_t kSlots = 2048;
static_assert(kSlots >= 4 * kKeywordCount && (kSlots & (kSlots - 1)) == 0);

struct keyword_table {
  std::uint16_t slot[kSlots] = {};  // index in kKeywordList + 1; 0 = empty
  bool unique_and_upper_case = true;
};

constexpr keyword_table make_keyword_table() {
  keyword_table table;
  for (std::size_t i = 0; i < kKeywordCount; ++i) {
    std::uint32_t hash = kHashSeed;
    for (char c : kKeywordList[i].name) {
      if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
        table.unique_and_upper_case = false;
      hash = fold(hash, static_cast<unsigned char>(c));
    }
    std::size_t s = hash & (kSlots - 1);
    while (table.slot[s] != 0) {
      if (kKeywordList[table.slot[s] - 1].name == kKeywordList[i].name) table.unique_and_upper_case = false;
      s = (s + 1) & (kSlots - 1);
    }
    table.slot[s] = static_cast<std::uint16_t>(i + 1);
  }
  return table;
}

constexpr keyword_table kKeywordTable = make_keyword_table();
static_assert(kKeywordTable.unique_and_upper_case, "a keyword is listed twice or not in upper case");

const keyword* find_keyword(const unsigned char* word, std::size_t len) noexcept {
  if (len > kLongestKeyword) return nullptr;
  char upper[kLongestKeyword];
  std::uint32_t hash = kHashSeed;
  for (std::size_t i = 0; i < len; ++i) {
    const unsigned char c = word[i];
    const auto u = static_cast<unsigned char>(c >= 'a' && c <= 'z' ? c - ('a' - 'A') : c);
    upper[i] = static_cast<char>(u);
    hash = fold(hash, u);
  }
  const std::string_view name(upper, len);
  for (std::size_t s = hash & (kSlots - 1); kKeywordTable.slot[s] != 0; s = (s + 1) & (kSlots - 1)) {
    const keyword& k = kKeywordList[kKeywordTable.slot[s] - 1];
    if (k.name == name) return &k;
  }
  return nullptr;
}

// ---------------------------------------------------------------- characters (ASCII, no locale)

constexpr bool is_digit(unsigned char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_hex_digit(unsigned char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
// Unquoted identifier characters, as MySQL: letters, digits, '_', '$', and every
// byte of a multi-byte character.
constexpr bool is_word_char(unsigned char c) noexcept {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c >= 0x80;
}
// Blanks, and every other control character (NUL included): a separator.
constexpr bool is_blank(unsigned char c) noexcept { return c <= ' ' || c == 0x7f; }

// Length of the valid UTF-8 sequence at p (at most avail bytes), 0 if invalid.
std::size_t utf8_sequence(const unsigned char* p, std::size_t avail) noexcept {
  const unsigned char lead = p[0];
  if (lead < 0x80) return 1;
  std::size_t n = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;  // up to U+10FFFF
  } else {
    return 0;
  }
  if (avail < n || p[1] < low || p[1] > high) return 0;
  for (std::size_t i = 2; i < n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
  }
  return n;
}

// ---------------------------------------------------------------- the tokenizer

class normalizer {
 public:
  normalizer(const char* text, std::size_t len, sink& out) noexcept
      : text_(reinterpret_cast<const unsigned char*>(text)),
        len_(text != nullptr ? len : 0),
        out_(out),
        stack_(out) {}

  void run() noexcept {
    while (pos_ < len_) next_token();
    // MySQL drops one final ';' (digest_add_token, token 0).
    if (stack_.peek(0) == tok::semicolon) stack_.pop(1);
    stack_.settle(false);
  }

 private:
  // What the previous token was, for the rules that depend on it.
  enum class previous : std::uint8_t { other, identifier, qualifier_dot, is_keyword, not_keyword };

  unsigned char at(std::size_t i) const noexcept { return i < len_ ? text_[i] : 0; }

  void next_token() noexcept {
    const unsigned char c = text_[pos_];
    const unsigned char c1 = at(pos_ + 1);
    if (is_blank(c)) {
      ++pos_;
    } else if (c == '#' || (c == '-' && c1 == '-' && (pos_ + 2 >= len_ || is_blank(text_[pos_ + 2])))) {
      skip_line();
    } else if (c == '/' && c1 == '*') {
      comment();
    } else if (c == '*' && c1 == '/' && in_executable_comment_) {
      pos_ += 2;
      in_executable_comment_ = false;
    } else if (c == '\'' || c == '"') {
      pos_ = string_end(pos_ + 1, c);
      literal(false);
    } else if (c == '`') {
      quoted_identifier();
    } else if (is_digit(c) && previous_ != previous::qualifier_dot) {
      number();
    } else if (c == '.' && is_digit(c1) && previous_ != previous::identifier) {
      number();
    } else if (is_word_char(c)) {
      word();
    } else {
      punctuation();
    }
  }

  void skip_line() noexcept {
    while (pos_ < len_ && text_[pos_] != '\n') ++pos_;
  }

  void comment() noexcept {
    if (at(pos_ + 2) == '!') {
      // "/*!" or "/*!80000": MySQL reads what follows as SQL, up to "*/".
      pos_ += 3;
      std::size_t digits = 0;
      while (digits < 6 && is_digit(at(pos_ + digits))) ++digits;
      if (digits >= 5) pos_ += digits;
      in_executable_comment_ = true;
      return;
    }
    // Comments and optimizer hints ("/*+ ... */"); unterminated: to the end.
    std::size_t i = pos_ + 2;
    while (i + 1 < len_ && !(text_[i] == '*' && text_[i + 1] == '/')) ++i;
    pos_ = i + 1 < len_ ? i + 2 : len_;
  }

  // The end (past the closing quote) of a string opened before `from`: backslash
  // escapes and doubled quotes; unterminated: the end of the text.
  std::size_t string_end(std::size_t from, unsigned char quote) const noexcept {
    std::size_t i = from;
    while (i < len_) {
      if (text_[i] == '\\') {
        i += 2;
      } else if (text_[i] == quote) {
        if (at(i + 1) != quote) return i + 1;  // not a doubled quote
        i += 2;
      } else {
        ++i;
      }
    }
    return len_;
  }

  // A literal, after MySQL's reductions (sql_digest.cc, digest_add_token).
  void literal(bool number) noexcept {
    if (number) {
      // TOK_GENERIC_VALUE := (UNARY_PLUS | UNARY_MINUS) (NUM | ... | TOK_GENERIC_VALUE)
      while ((stack_.peek(0) == tok::plus || stack_.peek(0) == tok::minus) &&
             stack_.starts_expression_at(1)) {
        stack_.pop(1);
      }
    }
    tok reduced = tok::value;
    // TOK_GENERIC_VALUE_LIST := (TOK_GENERIC_VALUE | TOK_GENERIC_VALUE_LIST) ',' TOK_GENERIC_VALUE
    if (stack_.peek(0) == tok::comma && (stack_.peek(1) == tok::value || stack_.peek(1) == tok::value_list)) {
      stack_.pop(2);
      reduced = tok::value_list;
    }
    stack_.push(reduced);
    previous_ = previous::other;
  }

  void close_paren() noexcept {
    const tok inside = stack_.peek(0);
    if ((inside == tok::value || inside == tok::value_list) && stack_.peek(1) == tok::lparen) {
      // TOK_ROW_SINGLE_VALUE := '(' TOK_GENERIC_VALUE ')', and
      // TOK_ROW_MULTIPLE_VALUE := '(' TOK_GENERIC_VALUE_LIST ')'
      stack_.pop(2);
      const bool single = inside == tok::value;
      const tok row = single ? tok::row_single : tok::row_multi;
      const tok rows = single ? tok::row_single_list : tok::row_multi_list;
      tok reduced = row;
      if (stack_.peek(0) == tok::comma && (stack_.peek(1) == row || stack_.peek(1) == rows)) {
        stack_.pop(2);  // ... _LIST := (row | rows) ',' row
        reduced = rows;
      } else if (stack_.peek(0) == tok::in) {
        stack_.pop(1);  // TOK_IN_GENERIC_VALUE_EXPRESSION := IN_SYM row
        reduced = tok::in_values;
      }
      stack_.push(reduced);
      previous_ = previous::other;
      return;
    }
    fixed_token(")", false);
  }

  // A token no reduction takes back.
  void fixed_token(std::string_view text, bool starts_expr, bool space_after = true) noexcept {
    stack_.settle(starts_expr);
    out_.token(text, space_after);
    previous_ = previous::other;
  }

  void stacked_token(tok t) noexcept {
    stack_.push(t);
    previous_ = previous::other;
  }

  void number() noexcept {
    const std::size_t start = pos_;
    if (text_[start] == '0' && (at(start + 1) == 'x' || at(start + 1) == 'b')) {
      // 0x1F, 0b101 (lower-case prefix only, as MySQL); "0x1G" is an identifier.
      const bool hex = at(start + 1) == 'x';
      std::size_t i = start + 2;
      while (i < len_ && (hex ? is_hex_digit(text_[i]) : (text_[i] == '0' || text_[i] == '1'))) ++i;
      if (i > start + 2 && !(i < len_ && is_word_char(text_[i]))) {
        pos_ = i;
        literal(true);
        return;
      }
    }
    std::size_t i = start;
    while (i < len_ && is_digit(text_[i])) ++i;
    if (at(i) == '.' && i < len_) {
      ++i;
      while (i < len_ && is_digit(text_[i])) ++i;
      i = exponent_end(i);
    } else if (exponent_end(i) != i) {
      i = exponent_end(i);
    } else if (i < len_ && is_word_char(text_[i])) {
      word();  // "123abc" is an identifier
      return;
    }
    pos_ = i;
    literal(true);
  }

  // Past "e5", "E-3", "e+10" at i; i when there is no exponent.
  std::size_t exponent_end(std::size_t i) const noexcept {
    if (at(i) != 'e' && at(i) != 'E') return i;
    std::size_t j = i + 1;
    if (at(j) == '+' || at(j) == '-') ++j;
    if (!is_digit(at(j))) return i;
    while (j < len_ && is_digit(text_[j])) ++j;
    return j;
  }

  void word() noexcept {
    const std::size_t start = pos_;
    std::size_t end = start;
    while (end < len_ && is_word_char(text_[end])) ++end;
    const std::size_t len = end - start;

    if (len == 1 && at(end) == '\'') {
      const unsigned char prefix = text_[start] | 0x20;
      if (prefix == 'x' || prefix == 'b') {  // X'1F', B'101': numbers for MySQL
        pos_ = end + 1;
        while (pos_ < len_ && text_[pos_] != '\'') ++pos_;
        pos_ = pos_ < len_ ? pos_ + 1 : len_;
        literal(true);
        return;
      }
      if (prefix == 'n') {  // N'national'
        pos_ = string_end(end + 1, '\'');
        literal(false);
        return;
      }
    }
    pos_ = end;

    if (previous_ == previous::qualifier_dot) {  // db.table, t.column: never keywords
      identifier(start, end, false);
      return;
    }
    if (text_[start] == '$' && len >= 2 &&
        std::all_of(text_ + start + 1, text_ + end, [](unsigned char c) { return is_digit(c); })) {
      literal(false);  // PostgreSQL's $1
      return;
    }
    if (text_[start] == '_' && len >= 2 && introduces_string(end)) {
      fixed_token("(_charset)", false);  // _utf8mb4'...': MySQL's UNDERSCORE_CHARSET
      return;
    }
    const keyword* k = find_keyword(text_ + start, len);
    if (k != nullptr && ((k->flags & kFunction) == 0 || at(end) == '(')) {
      keyword_token(*k);
      return;
    }
    identifier(start, end, false);
  }

  bool introduces_string(std::size_t i) const noexcept {
    while (i < len_ && (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r')) ++i;
    const unsigned char c = at(i);
    const unsigned char c1 = at(i + 1);
    return c == '\'' || c == '"' || ((c | 0x20) == 'x' && c1 == '\'') || ((c | 0x20) == 'b' && c1 == '\'') ||
           (c == '0' && (c1 == 'x' || c1 == 'b'));
  }

  void keyword_token(const keyword& k) noexcept {
    if ((k.flags & kIn) != 0) {
      stacked_token(tok::in);
      return;
    }
    if ((k.flags & kNull) != 0 && previous_ != previous::is_keyword && previous_ != previous::not_keyword) {
      literal(false);  // NULL as a literal: TOK_GENERIC_VALUE := NULL_SYM
      return;
    }
    fixed_token(k.name, (k.flags & kStartsExpression) != 0);
    if ((k.flags & kIs) != 0) previous_ = previous::is_keyword;
    if ((k.flags & kNot) != 0) previous_ = previous::not_keyword;
  }

  void quoted_identifier() noexcept {
    const std::size_t start = pos_ + 1;
    std::size_t i = start;
    // A doubled backquote is inside the text (at() is 0 past the end): i stops at len_.
    while (i < len_ && !(text_[i] == '`' && at(i + 1) != '`')) i += text_[i] == '`' ? 2 : 1;
    pos_ = i < len_ ? i + 1 : len_;
    identifier(start, i, true);
  }

  // `name`: MySQL prints the identifier as read (a quoted one unescaped), nothing
  // for an empty one. Invalid UTF-8 and control characters become '?'.
  void identifier(std::size_t start, std::size_t end, bool quoted) noexcept {
    stack_.settle(false);
    previous_ = previous::identifier;
    if (start == end) return;
    out_.begin_token();
    out_.put("`", 1);
    const char* text = reinterpret_cast<const char*>(text_);
    std::size_t run = start;  // bytes copied as they are: [run, i)
    std::size_t i = start;
    while (i < end) {
      const unsigned char c = text_[i];
      if (quoted && c == '`') {  // `` inside quotes: one backquote
        out_.put(text + run, i + 1 - run);
        i += 2;
        run = i;
        continue;
      }
      const std::size_t n = (c < ' ' || c == 0x7f) ? 0 : utf8_sequence(text_ + i, end - i);
      if (n == 0) {
        out_.put(text + run, i - run);
        out_.put("?", 1);
        run = ++i;
      } else {
        i += n;
      }
    }
    out_.put(text + run, std::min(i, end) - run);
    out_.put("`", 1);
    out_.end_token(true);
  }

  void punctuation() noexcept {
    struct operator_spelling {
      std::string_view text;
      std::string_view shown;
      bool starts_expr;
    };
    // Longest first. MySQL prints "<>" as "!=" (the last spelling of NE in lex.h).
    static constexpr operator_spelling kOperators[] = {
        {"<=>", "<=>", false}, {"->>", "->>", false}, {"<=", "<=", false}, {">=", ">=", false},
        {"<>", "!=", false},   {"!=", "!=", false},   {"<<", "<<", true},  {">>", ">>", true},
        {"&&", "&&", true},    {"||", "||", true},    {":=", ":=", false}, {"->", "->", false},
    };
    for (const operator_spelling& op : kOperators) {
      if (static_cast<unsigned char>(op.text[0]) == text_[pos_] && len_ - pos_ >= op.text.size() &&
          std::memcmp(text_ + pos_, op.text.data(), op.text.size()) == 0) {
        pos_ += op.text.size();
        fixed_token(op.shown, op.starts_expr);
        return;
      }
    }
    const char c = static_cast<char>(text_[pos_++]);
    switch (c) {
      case '(':
        stacked_token(tok::lparen);
        return;
      case ',':
        stacked_token(tok::comma);
        return;
      case '+':
        stacked_token(tok::plus);
        return;
      case '-':
        stacked_token(tok::minus);
        return;
      case ';':
        stacked_token(tok::semicolon);
        return;
      case ')':
        close_paren();
        return;
      case '?':
        literal(false);
        return;
      case '@':
        fixed_token("@", false, false);
        return;  // "@@var", "@var"
      case '.': {
        const bool qualifies = previous_ == previous::identifier;
        fixed_token(".", false);
        if (qualifies) previous_ = previous::qualifier_dot;
        return;
      }
      case '*':
      case '/':
      case '%':
      case '^':
      case '|':
      case '&':
        fixed_token(std::string_view(&c, 1), true);
        return;
      default:
        fixed_token(std::string_view(&c, 1), false);
        return;
    }
  }

  const unsigned char* text_;
  std::size_t len_;
  std::size_t pos_ = 0;
  sink& out_;
  token_stack stack_;
  bool in_executable_comment_ = false;
  previous previous_ = previous::other;
};

}  // namespace

std::size_t normalize(const char* text, std::size_t len, char* out, std::size_t cap,
                      bool* truncated) noexcept {
  sink output(out, cap, nullptr);
  normalizer(text, len, output).run();
  return output.finish(truncated);
}

void sha256_hex(const void* data, std::size_t len, char out[kHexLength + 1]) noexcept {
  sha256 hash;
  hash.update(data, len);
  write_hex(hash, out);
}

void compute(const char* text, std::size_t len, char* digest_text, std::size_t digest_text_cap,
             char digest_hex[kHexLength + 1], bool* truncated) noexcept {
  sha256 hash;
  sink output(digest_text, digest_text_cap, &hash);
  normalizer(text, len, output).run();
  output.finish(truncated);
  write_hex(hash, digest_hex);
}

}  // namespace pfs::digest
