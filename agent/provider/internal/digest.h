// Statement digests computed by the agent: DIGEST_TEXT and DIGEST as MySQL 8.0 shows
// them in events_statements_* and events_statements_summary_by_digest, for the SQL (or
// any request text) of an instrumented program. No heap allocation, no exceptions, no
// locale: everything goes into caller buffers, so this runs on the event path.
//
// DIGEST_TEXT follows MySQL's digest (sql/sql_digest.cc, sql/gen_lex_token.cc) as far
// as a tokenizer without the SQL grammar can:
//  - comments are removed: "-- " (two dashes then a space, a control character or the
//    end), "#" to the end of the line, "/* */" (unterminated: to the end), optimizer
//    hints "/*+ */" too (MySQL keeps hints). The content of "/*! */" (and "/*!NNNNN")
//    is read as SQL, as MySQL does.
//  - one space between tokens, none before the first or after the last, none after
//    '@' ("@@`version`", "@`var`"); a final ';' is dropped.
//  - literals become '?': strings '...' and "..." (backslash escapes and doubled
//    quotes; double quotes are strings, as without ANSI_QUOTES), N'...', X'..',
//    B'..', numbers (123, 1.5, .5, 1e-3, 0x1F, 0b101), '?' markers and PostgreSQL's
//    $1 markers (MySQL would read "$1" as an identifier). NULL is a literal except
//    right after IS or NOT (IS NULL, IS NOT NULL, NOT NULL): MySQL decides with its
//    grammar, which reduces NULL only where a literal is expected. TRUE and FALSE stay.
//  - MySQL's reductions, on the same token stack: "-" or "+" before a number, when the
//    token before the sign starts an expression ('(', ',', SELECT, AND, OR, NOT, LIKE,
//    BETWEEN, WHEN, CASE, arithmetic operators ...: MySQL's list; not '=', so
//    "a = -1" gives "`a` = - ?", exactly as MySQL), is folded into the literal;
//    "?, ?" lists become "?, ..."; "(?)" and "(...)" for parenthesized literals;
//    "IN (...)" for any literal IN list; several VALUES rows become
//    "(?) /* , ... */" or "(...) /* , ... */".
//  - keywords (a list of 430 MySQL 8.0 keywords) are upper-cased; "<>" is shown
//    as "!=", as MySQL prints it. The function names MySQL only recognizes before '('
//    (COUNT, SUM, MIN, MAX, CAST, NOW, SUBSTRING, ...) are keywords only when '('
//    follows at once ("COUNT(*)" gives "COUNT ( * )"; "count (*)" gives "`count` ( * )").
//    Other synonyms keep the spelling used (MySQL prints one spelling per token).
//  - other words are identifiers, printed between backquotes with their case; a
//    backquoted identifier is printed unescaped (`a``b` gives `a`b`, as MySQL does),
//    an empty one not at all. Bytes that are not valid UTF-8, and control
//    characters, are shown as '?' inside identifiers, so that the text is valid UTF-8.
//    A word after "identifier." is an identifier even if it is a keyword or starts
//    with a digit ("t.1x"). "_charset'...'" introducers print as "(_charset) ?".
// Not supported: ANSI_QUOTES, NO_BACKSLASH_ESCAPES, PIPES_AS_CONCAT, IGNORE_SPACE modes.
// A run of more than ~128 unary signs before a number is folded only in part (the
// reductions look back over a bounded window; MySQL's stack is unbounded).
//
// DIGEST is the SHA-256 of the normalized text, as 64 lower-case hex characters.
// MySQL hashes its binary token array instead, so the values differ from a server's
// for the same statement; equal texts give equal digests either way. The hash covers
// the whole normalized text even when DIGEST_TEXT is truncated (MySQL stops collecting
// tokens at max_digest_length and hashes what it kept).
#pragma once

#include <cstddef>

namespace pfs::digest {

inline constexpr std::size_t kHexLength = 64;  // characters of DIGEST, without the NUL

// Writes DIGEST_TEXT of text[0, len) into out (cap bytes, always NUL-terminated when
// cap > 0) and returns its length without the NUL. When the text does not fit in
// cap - 1 bytes it is cut (at a character boundary) and ends with "..." (within the
// cap - 1 bytes), and *truncated is set; otherwise *truncated is cleared. truncated may
// be null; out may be null when cap is 0; text may be null when len is 0.
std::size_t normalize(const char* text, std::size_t len, char* out, std::size_t cap,
                      bool* truncated) noexcept;

// out = lower-case hex SHA-256 of data[0, len), NUL-terminated.
void sha256_hex(const void* data, std::size_t len, char out[kHexLength + 1]) noexcept;

// normalize() into digest_text, and digest_hex = SHA-256 of the whole normalized text
// (what normalize would write with an unlimited cap, without the "..." marker).
void compute(const char* text, std::size_t len, char* digest_text, std::size_t digest_text_cap,
             char digest_hex[kHexLength + 1], bool* truncated) noexcept;

}  // namespace pfs::digest
