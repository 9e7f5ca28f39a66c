// Package expr owns typed scalar expressions: binding TiDB AST to typed
// trees, type checking, evaluation, and the SQL functions.
//
// Bind turns a parsed ast.ExprNode into an Expr, resolving column names
// against a Scope and checking every operand's type. All type errors are
// found here, at bind time, and reported through the caller's ErrorFunc
// positioned at the offending AST node; evaluation only fails for data
// errors (overflow, unparsable CAST text), which name the expression.
//
// # Types
//
// BOOLEAN, INT (32-bit), BIGINT, DOUBLE, DECIMAL(p, s) with p <= 38,
// VARCHAR(n)/STRING, DATE (days since 1970-01-01), TIMESTAMP(p) (nanoseconds
// since 1970-01-01, wall clock without zone; the representable range is
// therefore 1677-09-21 .. 2262-04-11) and INTERVAL (a day-time duration,
// only as a function argument or in TIMESTAMP +/- INTERVAL). streamsql has
// no session time zone: wall-clock functions (NOW, UNIX_TIMESTAMP, ...)
// work in UTC.
//
// # Literals
//
// An integer literal is INT if it fits 32 bits, else BIGINT, else
// DECIMAL(n, 0); 1.5 is DECIMAL(2, 1) (the digits as written, as Flink);
// 1e3 is DOUBLE; TIMESTAMP '2024-01-01 00:00:01.5' is TIMESTAMP(p) with p
// the number of fraction digits written; DATE '2024-01-01' is DATE.
// Constant sub-expressions are folded at bind time unless evaluating them
// fails (then the error happens at run time, as documented below).
//
// # Result types of arithmetic (+ - * / %)
//
//   - INT op INT -> INT; INT or BIGINT with BIGINT -> BIGINT.
//   - DOUBLE with any numeric -> DOUBLE.
//   - DECIMAL with an integer or DECIMAL -> DECIMAL, integers taken as
//     DECIMAL(10, 0) (INT) and DECIMAL(19, 0) (BIGINT), with Flink's
//     derivation: + and -: s = max(s1, s2), p = max(p1-s1, p2-s2) + s + 1;
//     *: s = s1 + s2, p = p1 + p2 + 1; /: s = max(6, s1 + p2 + 1),
//     p = p1 - s1 + s2 + s; %: s = max(s1, s2), p = min(p1-s1, p2-s2) + s.
//     When p exceeds 38 it is capped at 38 and the scale reduced to
//     max(38 - (p - s), min(s, 6)). Results are rounded HALF_UP to s.
//   - TIMESTAMP +/- INTERVAL -> TIMESTAMP; DATE_ADD and friends as MySQL.
//   - NULL literal with T -> T.
//
// # Overflow and division rule
//
//   - INT, BIGINT or DECIMAL division or MOD by zero is a run-time error
//     that fails the job, as in Flink.
//   - '/' on two integers is integer division truncating toward zero (as
//     Flink does); '%' and MOD take the sign of the dividend.
//   - INT arithmetic is checked against the int32 range and BIGINT
//     against int64 (including unary minus, ABS and MIN / -1): overflow is
//     a run-time error naming the expression, never a wrapped value.
//   - A DECIMAL result that does not fit its result type DECIMAL(p, s)
//     (at most 38 digits) is a run-time error naming the expression.
//   - DOUBLE follows IEEE 754 (overflow gives +-Inf, SQRT(-1) gives NaN,
//     x / 0 gives +-Inf or NaN, MOD(x, 0) gives NaN), as in Flink.
//   - TIMESTAMP arithmetic outside the representable range is a run-time
//     error.
//   - CAST of a value that does not fit the target type (out-of-range
//     number, unparsable text) is a run-time error naming the value and the
//     expression; TRY_CAST yields NULL instead. Implicit casts of literals
//     happen at bind time and report the same failure as a bind error.
//
// # Comparisons
//
// Numbers compare with numbers (by value), strings with strings, BOOLEAN
// with BOOLEAN, DATE/TIMESTAMP with DATE/TIMESTAMP. A string literal
// compared with a DATE or TIMESTAMP is converted to it at bind time.
// Anything else, notably STRING against a number, is a bind error: write
// an explicit CAST, as Flink requires.
//
// # Functions
//
// catalog.go lists every function and operator form with its signature,
// a one-line description, how it differs from Flink's and an example;
// SHOW FUNCTIONS prints its names and docs/functions.md is generated from
// it. It also names Flink's built-ins that streamsql lacks (those needing
// VARIANT, BITMAP or structured types, the grouping-set
// and ranking window functions), so that calling one is an error naming
// it rather than an unknown function. A test keeps the catalog, the
// binder's registry and the planner's aggregates in step.
//
// Aggregates (COUNT, SUM, STDDEV_POP, LISTAGG, ...) and window functions
// (ROW_NUMBER, ...) are not bound here: the planner substitutes them
// through Scope.Replace, and Bind rejects any left over ("aggregate
// function SUM is not allowed here"). Subqueries are rejected too.
// BindJSONAgg binds the per-row part of JSON_ARRAYAGG and JSON_OBJECTAGG.
//
// Flink syntax TiDB cannot parse reaches Bind as internal calls the
// pre-lexer writes (see package parser): __extract, __timestampadd,
// __timestampdiff, __overlaps, the __json_* functions, and x REGEXP
// __is_json(...) / __similar_to(...) for IS JSON and SIMILAR TO.
//
// # Flink flavour
//
// CONCAT returns NULL if any argument is NULL, CONCAT_WS skips NULLs, and
// both require STRING arguments. LIKE has no escape character unless
// ESCAPE is given (as Flink). TRIM removes any of the given characters
// (as Flink). FROM_UNIXTIME returns a STRING (as Flink). DATE_FORMAT and
// TO_TIMESTAMP take either MySQL patterns (containing '%': %Y-%m-%d
// %H:%i:%s) or Java DateTimeFormatter patterns (yyyy-MM-dd HH:mm:ss.SSS;
// the week fields Y, w, W and e follow the en-US locale, as Flink on a
// JVM in that locale). TO_TIMESTAMP, TO_DATE and DATE(text) return NULL
// when the text does not parse, UNIX_TIMESTAMP(text) returns
// -9223372036854775808, as Flink does; CAST fails instead. The regular
// expression functions use Go's RE2 syntax; a pattern computed at run
// time that does not compile makes them NULL (REGEXP: FALSE), as in
// Flink, and REGEXP_EXTRACT's group defaults to 0, the whole match.
// REGEXP_EXTRACT_ALL's defaults to 1, and it fails instead, as Flink's
// does, on a pattern that does not compile or a group it does not have.
// RAND(seed) and RAND_INTEGER(seed, n) draw java.util.Random's numbers.
// Flink's a || b is CONCAT only if the TiDB parser runs with
// PIPES_AS_CONCAT; otherwise it is OR, and Bind's error says so.
//
// # Evaluation
//
// Bound trees are immutable and safe for concurrent Eval. Hot shapes are
// specialized at bind time (column-vs-literal comparisons, integer and
// DOUBLE arithmetic without intermediate Values, IN lists as hash sets,
// LIKE prefix/suffix/contains, TIMESTAMP minus a constant interval), and
// integer, DOUBLE, boolean, DATE and TIMESTAMP evaluation does not
// allocate.
package expr
