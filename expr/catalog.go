package expr

import (
	"fmt"
	"sort"
	"strings"
)

// The function catalog: one entry per built-in function name (and per
// operator form), with its signature, a one-line description, how it
// differs from Flink's, and an example with its result. SHOW FUNCTIONS
// lists the names, docs/functions.md is generated from it, and a test
// runs every example and checks that every function the binder or the
// planner resolves has an entry, so none of the three can drift.

// FuncKind says how a catalog entry is used.
type FuncKind uint8

// The kinds of catalog entries.
const (
	ScalarFunc    FuncKind = iota // f(args) in an expression
	AggregateFunc                 // f(args) in a GROUP BY query or OVER a window
	WindowFunc                    // f() OVER (...) only, or a group window of GROUP BY
	TableFunc                     // a window table function in FROM
	OperatorForm                  // syntax, not a named function: not listed by SHOW FUNCTIONS
)

func (k FuncKind) String() string {
	return [...]string{"scalar", "aggregate", "window", "table", "operator"}[k]
}

// FuncInfo describes one catalog entry.
type FuncInfo struct {
	Name     string // upper case, as SHOW FUNCTIONS lists it; the form for operators
	Kind     FuncKind
	Category string
	Sig      string // signature, Flink's notation
	Doc      string // one line
	// Note says how the function differs from Flink's, or marks a form
	// Flink does not have; empty when it behaves as Flink's.
	Note string
	// Example is an expression (a full SELECT for window and table
	// functions); aggregates run over the examples table t (see
	// ExampleTable). Result is its result, rows separated by "\n"; empty
	// for functions whose value changes between calls.
	Example, Result string
	// Keys are the binder's registry names implementing the entry; by
	// default the lower-case name of a scalar function. Aggregates,
	// window and table functions have none (the planner resolves them),
	// nor do operators and Native functions.
	Keys []string
	// Native marks a function TiDB's parser turns into an operator
	// (MOD(a, b) is a % b), so it has no registry entry.
	Native bool
}

// ExampleTable is the table aggregate, window and table function examples
// run over, with its rows.
var ExampleTable = []string{
	"CREATE TABLE t (x INT, d DOUBLE, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ('connector' = 'values')",
	"INSERT INTO t VALUES (1, 1.5, 'a', TIMESTAMP '2024-01-01 00:00:01'), (2, 2.5, 'b', TIMESTAMP '2024-01-01 00:00:02'), " +
		"(3, CAST(NULL AS DOUBLE), CAST(NULL AS STRING), TIMESTAMP '2024-01-01 00:00:03'), (4, 4.5, 'a', TIMESTAMP '2024-01-01 00:00:04')",
}

// The categories, in Flink's order.
const (
	catComparison  = "Comparison"
	catLogical     = "Logical"
	catArithmetic  = "Arithmetic"
	catString      = "String"
	catTemporal    = "Temporal"
	catConditional = "Conditional"
	catConversion  = "Type conversion"
	catCollection  = "Collections and rows"
	catJSON        = "JSON"
	catHash        = "Hash"
	catAggregate   = "Aggregate"
	catWindow      = "Windows and ranking"
	catCatalog     = "Catalog"
)

var categoryOrder = []string{catComparison, catLogical, catArithmetic, catString, catTemporal,
	catConditional, catConversion, catCollection, catJSON, catHash, catAggregate, catWindow, catCatalog}

const (
	noteMySQL   = "MySQL's function; Flink has no such function."
	noteUTC     = "In the session time zone, table.local-time-zone (examples: UTC)."
	noteRE2     = "Regular expressions use Go's RE2 syntax, not Java's (no backreferences or lookaround)."
	noteLTZ     = "Returns TIMESTAMP_LTZ(3) (TIMESTAMP_LTZ(p) for a larger precision), shown in the session time zone (examples: UTC)."
	noteNowLike = "Returns TIMESTAMP_LTZ(3), the instant, shown in the session time zone, as in Flink."
)

// e is shorthand for a scalar entry.
func e(cat, name, sig, doc, note, ex, res string, keys ...string) FuncInfo {
	return FuncInfo{Name: name, Kind: ScalarFunc, Category: cat, Sig: sig, Doc: doc, Note: note, Example: ex, Result: res, Keys: keys}
}

// op is shorthand for an operator form.
func op(cat, form, sig, doc, note, ex, res string, keys ...string) FuncInfo {
	return FuncInfo{Name: form, Kind: OperatorForm, Category: cat, Sig: sig, Doc: doc, Note: note, Example: ex, Result: res, Keys: keys}
}

func native(f FuncInfo) FuncInfo {
	f.Native = true
	return f
}

// agg is shorthand for an aggregate entry.
func agg(name, sig, doc, note, ex, res string) FuncInfo {
	return FuncInfo{Name: name, Kind: AggregateFunc, Category: catAggregate, Sig: sig, Doc: doc, Note: note, Example: ex, Result: res}
}

var catalog = []FuncInfo{
	// Comparison
	op(catComparison, "=, <>, !=, <, <=, >, >=", "value1 = value2", "Compares two values; UNKNOWN (NULL) if either is NULL.", "!= is MySQL's spelling of <>.", "2 > 1", "true"),
	op(catComparison, "<=>", "value1 <=> value2", "Equal, with NULL equal to NULL; never NULL.", noteMySQL+" Flink writes IS NOT DISTINCT FROM.", "NULL <=> NULL", "true"),
	op(catComparison, "IS [NOT] DISTINCT FROM", "value1 IS [NOT] DISTINCT FROM value2", "Inequality (equality) with NULL equal to NULL; never NULL.", "", "NULL IS NOT DISTINCT FROM NULL", "true"),
	op(catComparison, "IS [NOT] NULL", "value IS [NOT] NULL", "Tests for NULL.", "", "CAST(NULL AS INT) IS NULL", "true"),
	op(catComparison, "BETWEEN", "value1 [NOT] BETWEEN [ASYMMETRIC | SYMMETRIC] value2 AND value3", "Range test, bounds included; SYMMETRIC accepts the bounds in either order.", "", "12 BETWEEN SYMMETRIC 15 AND 12", "true"),
	op(catComparison, "LIKE", "string1 [NOT] LIKE string2 [ESCAPE char]", "SQL pattern match: % any sequence, _ any character; no escape character unless ESCAPE gives one.", "", "'JoKn' LIKE 'Jo_n%'", "true"),
	op(catComparison, "ILIKE", "string1 [NOT] ILIKE string2 [ESCAPE char]", "LIKE ignoring case.", "", "'JoKn' ILIKE 'jo_n%'", "true"),
	op(catComparison, "SIMILAR TO", "string1 [NOT] SIMILAR TO string2 [ESCAPE char]", "SQL regular expression matching the whole string: % and _ as in LIKE, plus | * + ? {m,n} ( ) [ ].", "A pattern computed by an expression must be in parentheses.", "'abc' SIMILAR TO 'a(b|x)%'", "true"),
	op(catComparison, "IN", "value1 [NOT] IN (value2, ...)", "List membership, with SQL's rules for NULL in the list.", "", "4 IN (1, 2, NULL)", "NULL"),
	op(catComparison, "REGEXP", "string1 [NOT] REGEXP string2", "The operator form of REGEXP(string1, string2).", noteMySQL, "'flink' REGEXP 'l.n'", "true"),

	// Logical
	op(catLogical, "AND, OR, NOT", "boolean1 AND boolean2", "Three-valued logic.", "", "TRUE OR CAST(NULL AS BOOLEAN)", "true"),
	op(catLogical, "XOR", "boolean1 XOR boolean2", "Exclusive or.", noteMySQL, "TRUE XOR FALSE", "true"),
	op(catLogical, "IS [NOT] TRUE / FALSE / UNKNOWN", "boolean IS [NOT] TRUE", "Truth tests; never NULL.", "", "CAST(NULL AS BOOLEAN) IS NOT TRUE", "true"),

	// Arithmetic
	op(catArithmetic, "+, -, *, /, %", "numeric1 + numeric2", "Arithmetic; / of two integers truncates toward zero; results follow Flink's type rules (see expr's package documentation).", "INT, BIGINT and DECIMAL division and % by zero, and overflow, fail the job, as in Flink; DOUBLE gives Infinity or NaN.", "7 / 2 + 7 % 2", "4"),
	op(catArithmetic, "DIV", "integer1 DIV integer2", "Integer division.", noteMySQL, "7 DIV 2", "3"),
	e(catArithmetic, "ABS", "ABS(numeric)", "Absolute value.", "", "ABS(-2.5)", "2.5"),
	native(e(catArithmetic, "MOD", "MOD(numeric1, numeric2)", "Remainder with the sign of numeric1.", "MOD(x, 0) of an INT, BIGINT or DECIMAL fails the job, as in Flink.", "MOD(-7, 3)", "-1")),
	e(catArithmetic, "POWER", "POWER(numeric1, numeric2)", "numeric1 raised to numeric2, as DOUBLE.", "", "POWER(2, 10)", "1024"),
	e(catArithmetic, "POW", "POW(numeric1, numeric2)", "POWER.", noteMySQL, "POW(2, 3)", "8"),
	e(catArithmetic, "SQRT", "SQRT(numeric)", "Square root, as DOUBLE.", "", "SQRT(16)", "4"),
	e(catArithmetic, "LN", "LN(numeric)", "Natural logarithm.", "", "LN(1)", "0"),
	e(catArithmetic, "LOG10", "LOG10(numeric)", "Base 10 logarithm.", "", "LOG10(1000)", "3"),
	e(catArithmetic, "LOG2", "LOG2(numeric)", "Base 2 logarithm.", "", "LOG2(8)", "3"),
	e(catArithmetic, "LOG", "LOG(numeric2) / LOG(numeric1, numeric2)", "Natural logarithm, or the logarithm of numeric2 to the base numeric1.", "", "LOG(2, 8)", "3"),
	e(catArithmetic, "EXP", "EXP(numeric)", "e raised to numeric.", "", "EXP(0)", "1"),
	e(catArithmetic, "CEIL", "CEIL(numeric) / CEIL(timepoint TO unit)", "Rounds up: a number to an integer, a time to a unit (see Temporal).", "", "CEIL(1.2)", "2", "ceil", "__ceil_to"),
	e(catArithmetic, "CEILING", "CEILING(numeric) / CEILING(timepoint TO unit)", "CEIL.", "", "CEILING(-1.5)", "-1", "ceiling"),
	e(catArithmetic, "FLOOR", "FLOOR(numeric) / FLOOR(timepoint TO unit)", "Rounds down: a number to an integer, a time to a unit (see Temporal).", "", "FLOOR(-1.5)", "-2", "floor", "__floor_to"),
	e(catArithmetic, "SIN", "SIN(numeric)", "Sine.", "", "SIN(0)", "0"),
	e(catArithmetic, "SINH", "SINH(numeric)", "Hyperbolic sine.", "", "SINH(0)", "0"),
	e(catArithmetic, "COS", "COS(numeric)", "Cosine.", "", "COS(0)", "1"),
	e(catArithmetic, "COSH", "COSH(numeric)", "Hyperbolic cosine.", "", "COSH(0)", "1"),
	e(catArithmetic, "TAN", "TAN(numeric)", "Tangent.", "", "TAN(0)", "0"),
	e(catArithmetic, "TANH", "TANH(numeric)", "Hyperbolic tangent.", "", "TANH(0)", "0"),
	e(catArithmetic, "COT", "COT(numeric)", "Cotangent, 1 / TAN(numeric).", "The trigonometric functions use Go's math library, whose last digit can differ from Java's.", "COT(1)", "0.6420926159343308"),
	e(catArithmetic, "ASIN", "ASIN(numeric)", "Arc sine.", "", "ASIN(1)", "1.5707963267948966"),
	e(catArithmetic, "ACOS", "ACOS(numeric)", "Arc cosine.", "", "ACOS(1)", "0"),
	e(catArithmetic, "ATAN", "ATAN(numeric)", "Arc tangent.", "", "ATAN(1)", "0.7853981633974483"),
	e(catArithmetic, "ATAN2", "ATAN2(numeric1, numeric2)", "Arc tangent of the point (numeric2, numeric1).", "", "ATAN2(1, 1)", "0.7853981633974483"),
	e(catArithmetic, "DEGREES", "DEGREES(numeric)", "Radians to degrees.", "", "DEGREES(PI())", "180"),
	e(catArithmetic, "RADIANS", "RADIANS(numeric)", "Degrees to radians.", "", "RADIANS(180)", "3.141592653589793"),
	e(catArithmetic, "SIGN", "SIGN(numeric)", "-1, 0 or 1, in numeric's type.", "", "SIGN(-3)", "-1"),
	e(catArithmetic, "ROUND", "ROUND(numeric[, integer])", "Rounds HALF_UP to integer decimal places (negative: left of the point).", "The number of places must be a literal.", "ROUND(3.145, 2)", "3.15"),
	e(catArithmetic, "TRUNCATE", "TRUNCATE(numeric[, integer])", "Cuts toward zero to integer decimal places.", "The number of places must be a literal.", "TRUNCATE(42.324, 2)", "42.32"),
	e(catArithmetic, "PI", "PI()", "π.", "", "PI()", "3.141592653589793"),
	e(catArithmetic, "E", "E()", "e.", "", "E()", "2.718281828459045"),
	e(catArithmetic, "RAND", "RAND([seed])", "Pseudorandom DOUBLE in [0, 1); with a seed, java.util.Random's sequence, so the same numbers as Flink.", "The seed must be a literal; one sequence per query, shared by its parallel instances.", "RAND(42) < 1", "true"),
	e(catArithmetic, "RAND_INTEGER", "RAND_INTEGER([seed, ] bound)", "Pseudorandom INT in [0, bound).", "The seed must be a literal.", "RAND_INTEGER(42, 10)", "0"),
	e(catArithmetic, "UUID", "UUID()", "A random (version 4) UUID string.", "", "CHAR_LENGTH(UUID())", "36"),
	e(catArithmetic, "BIN", "BIN(integer)", "Binary digits of integer (64-bit two's complement when negative).", "", "BIN(12)", "1100"),
	e(catArithmetic, "HEX", "HEX(integer) / HEX(string)", "Upper-case hex digits of an integer, or of a string's UTF-8 bytes.", "", "HEX('hello,world')", "68656C6C6F2C776F726C64"),

	// String
	op(catString, "||", "string1 || string2", "Concatenation; NULL if either is NULL.", "", "'Flink' || 'SQL'", "FlinkSQL"),
	e(catString, "CHAR_LENGTH", "CHAR_LENGTH(string)", "Number of characters.", "", "CHAR_LENGTH('héllo')", "5"),
	e(catString, "CHARACTER_LENGTH", "CHARACTER_LENGTH(string)", "CHAR_LENGTH.", "", "CHARACTER_LENGTH('abc')", "3"),
	e(catString, "LENGTH", "LENGTH(string)", "CHAR_LENGTH.", "MySQL counts bytes; streamsql counts characters.", "LENGTH('abc')", "3"),
	e(catString, "UPPER", "UPPER(string)", "Upper case.", "", "UPPER('flink')", "FLINK"),
	e(catString, "UCASE", "UCASE(string)", "UPPER.", noteMySQL, "UCASE('a')", "A"),
	e(catString, "LOWER", "LOWER(string)", "Lower case.", "", "LOWER('FLINK')", "flink"),
	e(catString, "LCASE", "LCASE(string)", "LOWER.", noteMySQL, "LCASE('A')", "a"),
	e(catString, "POSITION", "POSITION(string1 IN string2)", "1-based position of string1 in string2, 0 if absent.", "", "POSITION('in' IN 'flink')", "3"),
	e(catString, "LOCATE", "LOCATE(string1, string2[, integer])", "Position of string1 in string2 at or after position integer, 0 if absent.", "", "LOCATE('a', 'banana', 3)", "4"),
	e(catString, "INSTR", "INSTR(string1, string2)", "Position of string2 in string1, 0 if absent.", "", "INSTR('flink', 'in')", "3"),
	e(catString, "OVERLAY", "OVERLAY(string1 PLACING string2 FROM integer1 [FOR integer2])", "Replaces integer2 characters (default: the length of string2) of string1 from position integer1 with string2.", "", "OVERLAY('This is an old string' PLACING ' new' FROM 10 FOR 5)", "This is a new string"),
	e(catString, "TRIM", "TRIM([BOTH | LEADING | TRAILING] [string1] FROM string2) / TRIM([BOTH | LEADING | TRAILING] string) / TRIM(string)", "Removes the characters of string1 (default a space) from the ends of string2.", "", "TRIM(BOTH 'x' FROM 'xxaxx')", "a"),
	e(catString, "LTRIM", "LTRIM(string[, characters])", "Removes leading characters (default spaces).", "", "LTRIM('  a  ')", "a  "),
	e(catString, "RTRIM", "RTRIM(string[, characters])", "Removes trailing characters (default spaces).", "", "RTRIM('xxaxx', 'x')", "xxa"),
	e(catString, "BTRIM", "BTRIM(string[, characters])", "Removes leading and trailing characters (default spaces).", "", "BTRIM('/www.apache.org/', '/')", "www.apache.org"),
	e(catString, "REPEAT", "REPEAT(string, integer)", "string repeated integer times.", "", "REPEAT('ab', 3)", "ababab"),
	e(catString, "REPLACE", "REPLACE(string1, string2, string3)", "Replaces every occurrence of string2 in string1 by string3.", "", "REPLACE('ababab', 'abab', 'z')", "zab"),
	e(catString, "TRANSLATE", "TRANSLATE(expr, fromStr, toStr)", "Replaces each character of fromStr by the character of toStr at its position, or removes it past toStr's end.", "", "TRANSLATE('www.apache.org', 'wapcheorg', ' APCHEcom')", "   .APACHE.com"),
	e(catString, "SUBSTRING", "SUBSTRING(string FROM integer1 [FOR integer2]) / SUBSTRING(string, integer1[, integer2])", "Substring from 1-based position integer1 (0 counts as 1; negative: from the end), integer2 characters long.", "", "SUBSTRING('flink' FROM 2 FOR 3)", "lin"),
	e(catString, "SUBSTR", "SUBSTR(string, integer1[, integer2])", "SUBSTRING.", "", "SUBSTR('flink', -3)", "ink"),
	e(catString, "MID", "MID(string, integer1, integer2)", "SUBSTRING.", noteMySQL, "MID('flink', 2, 2)", "li"),
	e(catString, "LEFT", "LEFT(string, integer)", "The leftmost integer characters; '' for a negative integer.", "", "LEFT('flink', 2)", "fl"),
	e(catString, "RIGHT", "RIGHT(string, integer)", "The rightmost integer characters; '' for a negative integer.", "", "RIGHT('flink', 2)", "nk"),
	e(catString, "LPAD", "LPAD(string1, integer, string2)", "string1 left-padded with string2 (or cut) to integer characters.", "", "LPAD('hi', 4, '??')", "??hi"),
	e(catString, "RPAD", "RPAD(string1, integer, string2)", "string1 right-padded with string2 (or cut) to integer characters.", "", "RPAD('hi', 1, '??')", "h"),
	e(catString, "CONCAT", "CONCAT(string1, string2, ...)", "Concatenation; NULL if any argument is NULL.", "", "CONCAT('AA', 'BB', 'CC')", "AABBCC"),
	e(catString, "CONCAT_WS", "CONCAT_WS(separator, string1, ...)", "Concatenation with a separator, skipping NULLs; NULL if the separator is NULL.", "", "CONCAT_WS('~', 'AA', CAST(NULL AS STRING), 'BB', '', 'CC')", "AA~BB~~CC"),
	e(catString, "INITCAP", "INITCAP(string)", "Each word (a run of letters and digits) with its first character upper case and the rest lower case.", "", "INITCAP('hello WORLD')", "Hello World"),
	e(catString, "REVERSE", "REVERSE(string)", "The characters in reverse order.", "", "REVERSE('flink')", "knilf"),
	e(catString, "SPLIT_INDEX", "SPLIT_INDEX(string1, string2, integer)", "The integer-th (0-based) part of string1 split at string2; NULL past the end.", "", "SPLIT_INDEX('a,b,c', ',', 1)", "b"),
	e(catString, "ASCII", "ASCII(string)", "Code of the first character; 0 for ''.", "Returns INT (Flink: TINYINT).", "ASCII('abc')", "97"),
	e(catString, "CHR", "CHR(integer)", "The character with code integer modulo 256; '' for a negative integer.", "", "CHR(353)", "a"),
	e(catString, "TO_BASE64", "TO_BASE64(string) / TO_BASE64(bytes)", "Base64 of string's UTF-8 bytes, or of the bytes.", "", "TO_BASE64('hello world')", "aGVsbG8gd29ybGQ="),
	e(catString, "ENCODE", "ENCODE(string, charset)", "The string's bytes in charset ('US-ASCII', 'ISO-8859-1', 'UTF-8', 'UTF-16BE', 'UTF-16LE', 'UTF-16'), as BYTES; a character the charset cannot hold is '?'.", "", "ENCODE('hé', 'ISO-8859-1')", "x'68e9'"),
	e(catString, "UNHEX", "UNHEX(string)", "The bytes the hexadecimal digits stand for (either case); an odd number of digits reads as led by a 0; NULL if a character is not a hex digit.", "", "UNHEX('466c696E6B')", "x'466c696e6b'"),
	e(catString, "IS_VALID_UTF8", "IS_VALID_UTF8(bytes)", "Whether the bytes are well-formed UTF-8: no truncated or overlong sequences, surrogates or code points past U+10FFFF.", "", "IS_VALID_UTF8(X'80')", "false"),
	e(catString, "MAKE_VALID_UTF8", "MAKE_VALID_UTF8(bytes)", "The bytes as UTF-8 text, each ill-formed sequence replaced by U+FFFD.", "", "MAKE_VALID_UTF8(X'61C262')", "a\uFFFDb"),
	e(catString, "DECODE", "DECODE(bytes, charset)", "The bytes read as text in charset (as ENCODE); a malformed sequence is U+FFFD.", "", "DECODE(X'0068006900', 'UTF-16BE')", "hi\uFFFD"),
	e(catString, "FROM_BASE64", "FROM_BASE64(string)", "Decodes base64 (skipping line breaks and other non-alphabet characters) to a string.", "", "FROM_BASE64('aGVsbG8gd29ybGQ=')", "hello world"),
	e(catString, "STARTSWITH", "STARTSWITH(expr, startExpr)", "Whether expr starts with startExpr.", "STRING arguments only (no BYTES).", "STARTSWITH('SparkSQL', 'Spark')", "true"),
	e(catString, "ENDSWITH", "ENDSWITH(expr, endExpr)", "Whether expr ends with endExpr.", "STRING arguments only (no BYTES).", "ENDSWITH('SparkSQL', 'SQL')", "true"),
	e(catString, "REGEXP", "REGEXP(string, regex)", "Whether any substring matches; FALSE for an empty or invalid run-time pattern.", noteRE2, "REGEXP('flink', 'l.n')", "true", "regexp"),
	e(catString, "REGEXP_LIKE", "REGEXP_LIKE(string, regex)", "REGEXP.", noteMySQL, "REGEXP_LIKE('flink', '^f')", "true"),
	e(catString, "REGEXP_REPLACE", "REGEXP_REPLACE(string, regex, replacement)", "Replaces every match; $1 in replacement is group 1.", noteRE2, "REGEXP_REPLACE('foobar', 'oo|ar', '')", "fb"),
	e(catString, "REGEXP_EXTRACT", "REGEXP_EXTRACT(string, regex[, index])", "Group index (default 0, the whole match) of the first match; NULL without a match.", noteRE2, "REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)", "bar"),
	e(catString, "REGEXP_EXTRACT_ALL", "REGEXP_EXTRACT_ALL(string, regex[, index])", "Group index (default 1; 0 is the whole match) of every match, as an ARRAY<STRING>, a NULL element where the group did not take part; an index outside [0, groups] or a run-time pattern that does not compile fails the job.", noteRE2+" An empty match right after a match is not returned (Java returns it).", "REGEXP_EXTRACT_ALL('100-200, 300-400', '(\\d+)-(\\d+)', 2)", "[200, 400]"),
	e(catString, "REGEXP_COUNT", "REGEXP_COUNT(string, regex)", "Number of matches.", noteRE2, "REGEXP_COUNT('ababab', 'ab')", "3"),
	e(catString, "REGEXP_INSTR", "REGEXP_INSTR(string, regex)", "1-based position of the first match, 0 without one.", noteRE2, "REGEXP_INSTR('hello world', 'o')", "5"),
	e(catString, "REGEXP_SUBSTR", "REGEXP_SUBSTR(string, regex)", "The first match; NULL without one.", noteRE2, "REGEXP_SUBSTR('hello world', '[a-z]+d')", "world"),
	e(catString, "PRINTF", "PRINTF(format[, obj]*)", "Formats as java.util.Formatter with Locale.US; a NULL argument prints null.", "DATE and TIMESTAMP arguments print as SQL text; %t conversions are not supported.", "PRINTF('%s has %05.1f%%', 'x', 3.14159e0)", "x has 003.1%"),
	e(catString, "ELT", "ELT(index, expr[, exprs]*)", "The index-th expression (1-based); NULL out of range.", "STRING arguments only (no BYTES).", "ELT(2, 'scala-1', 'java-2', 'go-3')", "java-2"),
	e(catString, "URL_ENCODE", "URL_ENCODE(string)", "application/x-www-form-urlencoded encoding in UTF-8.", "", "URL_ENCODE('a b&c')", "a+b%26c"),
	e(catString, "URL_DECODE", "URL_DECODE(string)", "Decodes URL_ENCODE's form; NULL for a malformed escape.", "", "URL_DECODE('a+b%26c')", "a b&c"),
	e(catString, "PARSE_URL", "PARSE_URL(url, part[, key])", "Part HOST, PATH, QUERY, REF, PROTOCOL, AUTHORITY, FILE or USERINFO of url, or the value of query parameter key.", "", "PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k1')", "v1"),
	e(catString, "INET_ATON", "INET_ATON(string)", "IPv4 address as a BIGINT (a.b means a.0.0.b, a.b.c means a.b.0.c); NULL when invalid.", "", "INET_ATON('127.0.0.1')", "2130706433"),
	e(catString, "INET_NTOA", "INET_NTOA(integer)", "BIGINT in [0, 4294967295] as an IPv4 address; NULL otherwise.", "", "INET_NTOA(2130706433)", "127.0.0.1"),

	// Temporal
	op(catTemporal, "DATE 'yyyy-MM-dd'", "DATE string", "A DATE literal.", "", "DATE '2024-01-31' + INTERVAL '1' DAY", "2024-02-01"),
	op(catTemporal, "TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.S]'", "TIMESTAMP string", "A TIMESTAMP literal, its precision the digits written.", "", "TIMESTAMP '2024-01-01 10:00:00.5'", "2024-01-01 10:00:00.5"),
	op(catTemporal, "TIME 'HH:mm:ss[.S]'", "TIME string", "A TIME literal, its precision the digits written.", "", "TIME '23:30:00' + INTERVAL '1' HOUR", "00:30:00"),
	op(catTemporal, "INTERVAL", "INTERVAL string unit [TO unit]", "An interval, typed by its fields: YEAR, MONTH and YEAR TO MONTH make a year-month interval (INTERVAL YEAR(2), INTERVAL MONTH, INTERVAL YEAR(2) TO MONTH; prints +1-06), the other units a day-time interval (INTERVAL DAY(2), INTERVAL SECOND(3), ...; prints +0 01:30:00.000).", "", "DATE '2024-01-31' + INTERVAL '1' MONTH", "2024-02-29", FuncInterval),
	e(catTemporal, "CURRENT_TIME", "CURRENT_TIME", "The current time of day in the session time zone, TIME(0).", "", "CURRENT_TIME >= TIME '00:00:00'", "true"),
	e(catTemporal, "LOCALTIME", "LOCALTIME", "CURRENT_TIME.", "", "LOCALTIME >= TIME '00:00:00'", "true"),
	e(catTemporal, "LOCALTIMESTAMP", "LOCALTIMESTAMP", "The current timestamp, TIMESTAMP(3).", noteUTC, "LOCALTIMESTAMP > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "CURRENT_TIMESTAMP", "CURRENT_TIMESTAMP", "The current timestamp.", noteNowLike, "CURRENT_TIMESTAMP > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "NOW", "NOW()", "CURRENT_TIMESTAMP.", noteNowLike, "NOW() > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "CURRENT_ROW_TIMESTAMP", "CURRENT_ROW_TIMESTAMP()", "The current timestamp, read for each row.", noteNowLike, "CURRENT_ROW_TIMESTAMP() > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "SYSDATE", "SYSDATE()", "CURRENT_TIMESTAMP.", noteMySQL, "SYSDATE() > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "UTC_TIMESTAMP", "UTC_TIMESTAMP()", "CURRENT_TIMESTAMP.", noteMySQL, "UTC_TIMESTAMP() > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "CURRENT_DATE", "CURRENT_DATE", "The current date.", noteUTC, "CURRENT_DATE > DATE '2000-01-01'", "true"),
	e(catTemporal, "CURDATE", "CURDATE()", "CURRENT_DATE.", noteMySQL, "CURDATE() > DATE '2000-01-01'", "true"),
	e(catTemporal, "CURTIME", "CURTIME()", "CURRENT_TIME.", noteMySQL, "CURTIME() >= TIME '00:00:00'", "true"),
	e(catTemporal, "UTC_DATE", "UTC_DATE()", "CURRENT_DATE.", noteMySQL, "UTC_DATE() > DATE '2000-01-01'", "true"),
	e(catTemporal, "PROCTIME", "PROCTIME()", "The processing time; a computed column PROCTIME() is a processing-time attribute.", noteNowLike, "PROCTIME() > TIMESTAMP '2000-01-01 00:00:00'", "true"),
	e(catTemporal, "EXTRACT", "EXTRACT(unit FROM temporal)", "A field as BIGINT: MILLENNIUM, CENTURY, DECADE, YEAR, ISOYEAR, QUARTER, MONTH, WEEK (ISO), DAY, DOY, DOW (Sunday = 1), ISODOW (Monday = 1), HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND, NANOSECOND (within the second) or EPOCH (seconds).", "", "EXTRACT(DOW FROM DATE '1994-09-27')", "3", "extract", FuncExtract),
	e(catTemporal, "YEAR", "YEAR(date)", "EXTRACT(YEAR FROM date).", "", "YEAR(DATE '1994-09-27')", "1994"),
	e(catTemporal, "QUARTER", "QUARTER(date)", "EXTRACT(QUARTER FROM date).", "", "QUARTER(DATE '1994-09-27')", "3"),
	e(catTemporal, "MONTH", "MONTH(date)", "EXTRACT(MONTH FROM date).", "", "MONTH(DATE '1994-09-27')", "9"),
	e(catTemporal, "WEEK", "WEEK(date)", "ISO week of the year, EXTRACT(WEEK FROM date).", "", "WEEK(DATE '1994-09-27')", "39"),
	e(catTemporal, "WEEKOFYEAR", "WEEKOFYEAR(date)", "WEEK.", noteMySQL, "WEEKOFYEAR(DATE '1994-09-27')", "39"),
	e(catTemporal, "DAYOFYEAR", "DAYOFYEAR(date)", "EXTRACT(DOY FROM date).", "", "DAYOFYEAR(DATE '1994-09-27')", "270"),
	e(catTemporal, "DAYOFMONTH", "DAYOFMONTH(date)", "EXTRACT(DAY FROM date).", "", "DAYOFMONTH(DATE '1994-09-27')", "27"),
	e(catTemporal, "DAY", "DAY(date)", "DAYOFMONTH.", noteMySQL, "DAY(DATE '1994-09-27')", "27"),
	e(catTemporal, "DAYOFWEEK", "DAYOFWEEK(date)", "EXTRACT(DOW FROM date): Sunday = 1.", "", "DAYOFWEEK(DATE '1994-09-27')", "3"),
	e(catTemporal, "HOUR", "HOUR(timestamp | time)", "EXTRACT(HOUR FROM timestamp).", "", "HOUR(TIMESTAMP '1994-09-27 13:14:15')", "13"),
	e(catTemporal, "MINUTE", "MINUTE(timestamp | time)", "EXTRACT(MINUTE FROM timestamp).", "", "MINUTE(TIME '13:14:15')", "14"),
	e(catTemporal, "SECOND", "SECOND(timestamp | time)", "EXTRACT(SECOND FROM timestamp).", "", "SECOND(TIMESTAMP '1994-09-27 13:14:15')", "15"),
	op(catTemporal, "FLOOR(... TO unit), CEIL(... TO unit)", "FLOOR(timepoint TO unit)", "Rounds a DATE or TIMESTAMP down or up to MILLISECOND, SECOND, MINUTE, HOUR, DAY, WEEK (from Sunday), MONTH, QUARTER or YEAR; a TIME to MILLISECOND, SECOND, MINUTE or HOUR (CEIL past 23:00 wraps to 00:00).", "", "CEIL(TIMESTAMP '2024-01-01 12:44:31' TO MINUTE)", "2024-01-01 12:45:00"),
	op(catTemporal, "OVERLAPS", "(timepoint1, temporal1) OVERLAPS (timepoint2, temporal2)", "Whether two periods, each two time points or a start and an INTERVAL, overlap (ends included); TIME periods compare as times of day.", "", "(TIMESTAMP '2024-01-01 02:55:00', INTERVAL '1' HOUR) OVERLAPS (TIMESTAMP '2024-01-01 03:30:00', INTERVAL '2' HOUR)", "true", FuncOverlaps),
	e(catTemporal, "DATE_FORMAT", "DATE_FORMAT(timestamp | string, format)", "Formats with a Java DateTimeFormatter pattern ('yyyy-MM-dd HH:mm:ss'; week fields Y, w, W, e follow the en-US locale) or a MySQL pattern (one with %).", "MySQL patterns are streamsql's addition; zone letters (z, X, ...) are refused, TIMESTAMP has no zone; a TIMESTAMP_LTZ is formatted as its wall clock in the session time zone.", "DATE_FORMAT(TIMESTAMP '2024-12-31 10:00:00', 'YYYYww')", "202501"),
	e(catTemporal, "TIMESTAMPADD", "TIMESTAMPADD(unit, integer, timepoint)", "timepoint plus integer units (NANOSECOND to YEAR).", "", "TIMESTAMPADD(WEEK, 1, TIMESTAMP '2020-01-01 00:00:00')", "2020-01-08 00:00:00", "timestampadd", FuncTimestampAdd),
	e(catTemporal, "TIMESTAMPDIFF", "TIMESTAMPDIFF(unit, timepoint1, timepoint2)", "Whole units from timepoint1 to timepoint2, as INT.", "", "TIMESTAMPDIFF(DAY, DATE '2024-01-01', DATE '2024-03-01')", "60", "timestampdiff", FuncTimestampDiff),
	e(catTemporal, "DATEDIFF", "DATEDIFF(date1, date2)", "Days from date2 to date1.", noteMySQL, "DATEDIFF(DATE '2024-03-01', DATE '2024-01-01')", "60"),
	e(catTemporal, "DATE_ADD", "DATE_ADD(timepoint, INTERVAL n unit)", "timepoint plus an interval; months clamp to the month's end.", noteMySQL, "DATE_ADD(DATE '2024-01-31', INTERVAL 1 MONTH)", "2024-02-29"),
	e(catTemporal, "ADDDATE", "ADDDATE(timepoint, INTERVAL n unit)", "DATE_ADD.", noteMySQL, "ADDDATE(DATE '2024-01-31', INTERVAL 1 DAY)", "2024-02-01"),
	e(catTemporal, "DATE_SUB", "DATE_SUB(timepoint, INTERVAL n unit)", "timepoint minus an interval.", noteMySQL, "DATE_SUB(DATE '2024-03-31', INTERVAL 1 MONTH)", "2024-02-29"),
	e(catTemporal, "SUBDATE", "SUBDATE(timepoint, INTERVAL n unit)", "DATE_SUB.", noteMySQL, "SUBDATE(DATE '2024-03-01', INTERVAL 1 DAY)", "2024-02-29"),
	e(catTemporal, "DATE", "DATE(timestamp | string)", "The date part; NULL for text that does not parse.", noteMySQL, "DATE(TIMESTAMP '2024-01-01 10:00:00')", "2024-01-01"),
	e(catTemporal, "CONVERT_TZ", "CONVERT_TZ(string1, string2, string3)", "The time string1 ('yyyy-MM-dd HH:mm:ss') in zone string2 shown in zone string3; zones as Java names them (region, GMT+hh:mm, PST).", "An unknown zone is an error (Java silently takes GMT).", "CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles')", "1969-12-31 16:00:00"),
	e(catTemporal, "FROM_UNIXTIME", "FROM_UNIXTIME(numeric[, string])", "Epoch seconds as text, default 'yyyy-MM-dd HH:mm:ss'.", noteUTC, "FROM_UNIXTIME(44)", "1970-01-01 00:00:44"),
	e(catTemporal, "UNIX_TIMESTAMP", "UNIX_TIMESTAMP([string1[, string2]])", "Epoch seconds now, or of text string1 read with format string2 (default 'yyyy-MM-dd HH:mm:ss'); -9223372036854775808 when the text does not parse.", noteUTC, "UNIX_TIMESTAMP('1970-01-01 08:00:01')", "28801"),
	e(catTemporal, "TO_DATE", "TO_DATE(string1[, string2])", "Date text read with format string2 (default 'yyyy-MM-dd'); NULL when it does not parse.", "", "TO_DATE('2024-02-29')", "2024-02-29"),
	e(catTemporal, "TO_TIMESTAMP", "TO_TIMESTAMP(string1[, string2])", "Timestamp text read with format string2 (default 'yyyy-MM-dd HH:mm:ss'), as TIMESTAMP(3); NULL when it does not parse.", "", "TO_TIMESTAMP('2024-01-01 10:00:00')", "2024-01-01 10:00:00.000"),
	e(catTemporal, "TO_TIMESTAMP_LTZ", "TO_TIMESTAMP_LTZ(numeric[, precision]) / TO_TIMESTAMP_LTZ(string1[, string2[, string3]])", "An epoch in units of 10^-precision seconds (default 3), or text read with format string2 in zone string3 (default UTC).", noteLTZ, "TO_TIMESTAMP_LTZ(1234567890123, 3)", "2009-02-13 23:31:30.123"),
	e(catTemporal, "CURRENT_WATERMARK", "CURRENT_WATERMARK(rowtime)", "The watermark the evaluating operator has seen, NULL before the first.", "", "CURRENT_WATERMARK(CAST(NULL AS TIMESTAMP(3))) IS NULL", "true"),

	// Conditional
	op(catConditional, "CASE", "CASE value WHEN value1 [, value11]* THEN result1 ... [ELSE result] END / CASE WHEN condition1 THEN result1 ... END", "The first matching branch's result, else the ELSE result or NULL.", "", "CASE 3 WHEN 1 THEN 'one' WHEN 2, 3 THEN 'two or three' END", "two or three"),
	e(catConditional, "NULLIF", "NULLIF(value1, value2)", "NULL if value1 equals value2, else value1.", "", "NULLIF(5, 5)", "NULL"),
	e(catConditional, "COALESCE", "COALESCE(value1, value2, ...)", "The first argument that is not NULL.", "", "COALESCE(NULL, 'default')", "default"),
	e(catConditional, "IF", "IF(condition, true_value, false_value)", "true_value when condition is TRUE, else false_value.", "", "IF(5 > 3, 5, 3)", "5"),
	e(catConditional, "IFNULL", "IFNULL(input, null_replacement)", "null_replacement when input is NULL.", "", "IFNULL(CAST(NULL AS INT), 5)", "5"),
	e(catConditional, "ISNULL", "ISNULL(value)", "value IS NULL.", noteMySQL, "ISNULL(NULL)", "true"),
	e(catConditional, "IS_ALPHA", "IS_ALPHA(string)", "Whether every character is a letter; FALSE for '' and NULL.", "", "IS_ALPHA('abc')", "true"),
	e(catConditional, "IS_DECIMAL", "IS_DECIMAL(string)", "Whether string is a decimal number; FALSE for NULL.", "Hexadecimal and Java suffixes (1L, 2f) are not numbers here.", "IS_DECIMAL('-1.5e3')", "true"),
	e(catConditional, "IS_DIGIT", "IS_DIGIT(string)", "Whether every character is a digit; FALSE for '' and NULL.", "", "IS_DIGIT('123')", "true"),
	e(catConditional, "GREATEST", "GREATEST(value1, value2, ...)", "The greatest argument; NULL if any is NULL.", "", "GREATEST(1, 3, 2)", "3"),
	e(catConditional, "LEAST", "LEAST(value1, value2, ...)", "The least argument; NULL if any is NULL.", "", "LEAST(1, 3, 2)", "1"),

	// Type conversion
	e(catConversion, "CAST", "CAST(value AS type)", "Converts value to type; a value that does not convert fails the job.", "", "CAST('42' AS INT)", "42", FuncCast),
	e(catConversion, "TRY_CAST", "TRY_CAST(value AS type)", "CAST, NULL when the value does not convert.", "", "TRY_CAST('non-number' AS INT)", "NULL", FuncTryCast),
	e(catConversion, "TYPEOF", "TYPEOF(input[, force_serializable])", "input's type as text.", "streamsql's type names: a string literal is STRING NOT NULL (Flink: CHAR(n) NOT NULL).", "TYPEOF(1)", "INT NOT NULL"),

	// JSON
	op(catJSON, "IS JSON", "string IS [NOT] JSON [VALUE | SCALAR | ARRAY | OBJECT]", "Whether string is JSON (of that kind); never NULL.", "", "'{}' IS JSON OBJECT", "true"),
	e(catJSON, "JSON_EXISTS", "JSON_EXISTS(jsonValue, path [{TRUE | FALSE | UNKNOWN | ERROR} ON ERROR])", "Whether the SQL/JSON path finds a value.", "", "JSON_EXISTS('{\"a\": [{ \"b\": 1 }]}', '$.a[0].b')", "true", "json_exists", FuncJSONExists),
	e(catJSON, "JSON_VALUE", "JSON_VALUE(jsonValue, path [RETURNING type] [{NULL | ERROR | DEFAULT expr} ON EMPTY] [{NULL | ERROR | DEFAULT expr} ON ERROR])", "The scalar the path finds, as STRING or the RETURNING type.", "", "JSON_VALUE('{\"a\": true}', '$.a' RETURNING BOOLEAN)", "true", "json_value", FuncJSONValue),
	e(catJSON, "JSON_QUERY", "JSON_QUERY(jsonValue, path [{WITHOUT | WITH [CONDITIONAL | UNCONDITIONAL]} [ARRAY] WRAPPER] [{NULL | EMPTY ARRAY | EMPTY OBJECT | ERROR} ON EMPTY] [... ON ERROR])", "The array or object the path finds, as JSON text; RETURNING ARRAY<STRING> gives the array's elements, strings as their text, nested arrays and objects as JSON text, JSON null as NULL.", "", "JSON_QUERY('{\"a\":[{\"c\":\"c1\"},{\"c\":\"c2\"}]}', 'lax $.a[*].c')", "[\"c1\",\"c2\"]", "json_query", FuncJSONQuery),
	e(catJSON, "JSON_STRING", "JSON_STRING(value)", "value serialized as JSON.", "DATE and TIMESTAMP values become JSON strings in SQL text form.", "JSON_STRING('Hello, World!')", "\"Hello, World!\""),
	e(catJSON, "JSON_OBJECT", "JSON_OBJECT([[KEY] key VALUE value]* [{NULL | ABSENT} ON NULL])", "A JSON object of the pairs; nested JSON constructors and JSON(...) values are inserted as JSON.", "", "JSON_OBJECT(KEY 'K1' VALUE 'V1', 'K2' VALUE JSON_ARRAY(1, 2))", "{\"K1\":\"V1\",\"K2\":[1,2]}", FuncJSONObject),
	e(catJSON, "JSON_ARRAY", "JSON_ARRAY([value]* [{NULL | ABSENT} ON NULL])", "A JSON array of the values.", "", "JSON_ARRAY(1, '2', CAST(NULL AS INT) NULL ON NULL)", "[1,\"2\",null]", FuncJSONArray),
	e(catJSON, "JSON", "JSON(string)", "Inside JSON_OBJECT and JSON_ARRAY: string as JSON rather than a string value; '' is NULL.", "", "JSON_OBJECT('K' VALUE JSON('{\"K2\": 42}'))", "{\"K\":{\"K2\":42}}", FuncJSON),
	e(catJSON, "JSON_QUOTE", "JSON_QUOTE(string)", "string as a JSON string literal (/ and non-ASCII escaped).", "", "JSON_QUOTE('a\"b')", "\"a\\\"b\""),
	e(catJSON, "JSON_UNQUOTE", "JSON_UNQUOTE(string)", "A JSON string literal unescaped; other text unchanged.", "", "JSON_UNQUOTE('\"a/b\"')", "a/b"),

	// Hash
	e(catHash, "MD5", "MD5(string)", "MD5 digest of the UTF-8 bytes, 32 lower-case hex digits.", "", "MD5('abc')", "900150983cd24fb0d6963f7d28e17f72"),
	e(catHash, "SHA1", "SHA1(string)", "SHA-1 digest, 40 hex digits.", "", "SHA1('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"),
	e(catHash, "SHA224", "SHA224(string)", "SHA-224 digest, 56 hex digits.", "", "SHA224('abc')", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"),
	e(catHash, "SHA256", "SHA256(string)", "SHA-256 digest, 64 hex digits.", "", "SHA256('abc')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
	e(catHash, "SHA384", "SHA384(string)", "SHA-384 digest, 96 hex digits.", "", "SHA384('abc')", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"),
	e(catHash, "SHA512", "SHA512(string)", "SHA-512 digest, 128 hex digits.", "", "LEFT(SHA512('abc'), 16)", "ddaf35a193617aba"),
	e(catHash, "SHA2", "SHA2(string, hashLength)", "SHA-2 digest of 224, 256, 384 or 512 bits.", "", "LEFT(SHA2('abc', 512), 16)", "ddaf35a193617aba"),

	// Aggregate
	agg("COUNT", "COUNT([ALL] expression | DISTINCT expression) / COUNT(*)", "Number of rows with expression not NULL, or of all rows.", "COUNT(DISTINCT) takes one expression.", "COUNT(d)", "3"),
	agg("SUM", "SUM([ALL | DISTINCT] expression)", "Sum; NULL when there are no values.", "", "SUM(x)", "10"),
	agg("AVG", "AVG([ALL | DISTINCT] expression)", "Average, in the argument's type (integer AVG truncates).", "", "AVG(x)", "2"),
	agg("MIN", "MIN(expression)", "Smallest value.", "", "MIN(s)", "a"),
	agg("MAX", "MAX(expression)", "Largest value.", "", "MAX(d)", "4.5"),
	agg("STDDEV_POP", "STDDEV_POP([ALL | DISTINCT] expression)", "Population standard deviation, computed as Flink does: POWER((SUM(x*x) - SUM(x)*SUM(x)/COUNT(x)) / COUNT(x), 0.5) in the result type, which is AVG's.", "Integer overflow is an error where Java wraps.", "STDDEV_POP(d)", "1.2472191289246473"),
	agg("STDDEV_SAMP", "STDDEV_SAMP([ALL | DISTINCT] expression)", "Sample standard deviation (divides by COUNT - 1; NULL for one value).", "", "STDDEV_SAMP(d)", "1.5275252316519468"),
	agg("STDDEV", "STDDEV([ALL | DISTINCT] expression)", "STDDEV_SAMP.", "", "STDDEV(x)", "1"),
	agg("VAR_POP", "VAR_POP([ALL | DISTINCT] expression)", "Population variance; DOUBLE results carry the rounding of Flink's formula (1.555555555555556 where the exact value is 1.5555...).", "", "VAR_POP(d)", "1.555555555555556"),
	agg("VAR_SAMP", "VAR_SAMP([ALL | DISTINCT] expression)", "Sample variance.", "", "VAR_SAMP(d)", "2.333333333333334"),
	agg("VARIANCE", "VARIANCE([ALL | DISTINCT] expression)", "VAR_SAMP.", "", "VARIANCE(x)", "1"),
	agg("FIRST_VALUE", "FIRST_VALUE(expression)", "The first non-NULL value, in arrival order.", "", "FIRST_VALUE(s)", "a"),
	agg("LAST_VALUE", "LAST_VALUE(expression)", "The last non-NULL value, in arrival order.", "", "LAST_VALUE(s)", "a"),
	agg("COLLECT", "COLLECT([ALL | DISTINCT] expression)", "The non-NULL values as a MULTISET, each with its number of copies (DISTINCT: once each); {} for a group of NULLs only. A retraction takes one copy away.", "Elements print in their sort order (Flink's in its hash order).", "COLLECT(s)", "{a=2, b=1}"),
	agg("ARRAY_AGG", "ARRAY_AGG([ALL | DISTINCT] expression [RESPECT NULLS | IGNORE NULLS])", "The values as an ARRAY, in arrival order, NULL values included unless IGNORE NULLS (DISTINCT: each value once, a NULL too); NULL when there are none. A retraction removes the value's earliest copy, a NULL's too.", "Not in OVER windows, as in Flink.", "ARRAY_AGG(s)", "[a, b, NULL, a]"),
	agg("LISTAGG", "LISTAGG(expression[, separator])", "The non-NULL strings joined with separator (default ','), in arrival order.", "The separator must be a literal.", "LISTAGG(s, '-')", "a-b-a"),
	agg("PERCENTILE", "PERCENTILE(expression, percentage)", "The continuous percentile: the value at position percentage * (n - 1), interpolated.", "percentage must be a numeric literal; the array and frequency forms are not supported.", "PERCENTILE(x, 0.25)", "1.75"),
	agg("JSON_ARRAYAGG", "JSON_ARRAYAGG(items [{NULL | ABSENT} ON NULL])", "A JSON array of the values, in arrival order.", "Not in OVER windows, as in Flink.", "JSON_ARRAYAGG(s)", "[\"a\",\"b\",\"a\"]"),
	agg("JSON_OBJECTAGG", "JSON_OBJECTAGG([KEY] key VALUE value [{NULL | ABSENT} ON NULL])", "A JSON object of the pairs; a repeated key is an error.", "Members are in key order; not in OVER windows, as in Flink.", "JSON_OBJECTAGG(KEY CAST(x AS STRING) VALUE s ABSENT ON NULL)", "{\"1\":\"a\",\"2\":\"b\",\"4\":\"a\"}"),

	{Name: "GROUPING", Kind: AggregateFunc, Category: catAggregate, Sig: "GROUPING(expression1 [, expression2]*)",
		Doc: "With GROUPING SETS, ROLLUP or CUBE: 1 when the expression is not grouped by the row's grouping set, else 0; with several, the bits of GROUPING_ID.", Note: "",
		Example: "SELECT s, GROUPING(s) FROM t GROUP BY ROLLUP (s)", Result: "NULL 0\na 0\nb 0\nNULL 1"},
	{Name: "GROUPING_ID", Kind: AggregateFunc, Category: catAggregate, Sig: "GROUPING_ID(expression1 [, expression2]*)",
		Doc: "The GROUPING bits of the expressions as one number, the first the most significant.", Note: "",
		Example: "SELECT GROUPING_ID(s, x) FROM t WHERE x = 1 GROUP BY CUBE (s, x)", Result: "0\n1\n2\n3"},
	{Name: "GROUP_ID", Kind: AggregateFunc, Category: catAggregate, Sig: "GROUP_ID()",
		Doc: "Tells apart the copies of a grouping set written more than once: 0 for a set's first occurrence in the GROUP BY, 1 for its second, ...; 0 everywhere when no set repeats.", Note: "",
		Example: "SELECT s, GROUP_ID() FROM t WHERE x = 1 GROUP BY GROUPING SETS ((s), (s), ())", Result: "a 0\na 1\nNULL 0"},

	// Windows and ranking
	{Name: "ROW_NUMBER", Kind: WindowFunc, Category: catWindow, Sig: "ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)",
		Doc: "Numbers the rows of each partition; filtered on, it is Flink's Top-N or deduplication.", Note: "Only with a filter on the number (rn <= N, rn = N, BETWEEN).",
		Example: "SELECT x FROM (SELECT x, ROW_NUMBER() OVER (PARTITION BY s ORDER BY x DESC) AS rn FROM t WHERE s IS NOT NULL) WHERE rn = 1", Result: "2\n4"},
	{Name: "LAG", Kind: WindowFunc, Category: catWindow, Sig: "LAG(expression [, offset [, default]]) OVER (PARTITION BY ... ORDER BY time_attr)",
		Doc: "The value of expression offset rows (default 1) before the current row in its partition, or default (NULL) when there is none.", Note: "Over unbounded preceding OVER windows ordered by a time attribute; LEAD is refused in streaming mode, as in Flink.",
		Example: "SELECT x, LAG(x) OVER (ORDER BY ts) FROM t", Result: "1 NULL\n2 1\n3 2\n4 3"},
	{Name: "TUMBLE", Kind: TableFunc, Category: catWindow, Sig: "TUMBLE(TABLE t, DESCRIPTOR(ts), size [, offset])",
		Doc: "Tumbling windows: adds window_start, window_end and window_time; also TUMBLE(ts, size) in GROUP BY; an offset shifts the windows.", Note: "",
		Example: "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND)) GROUP BY window_start, window_end",
		Result:  "2024-01-01 00:00:00.000 1\n2024-01-01 00:00:02.000 2\n2024-01-01 00:00:04.000 1"},
	{Name: "HOP", Kind: TableFunc, Category: catWindow, Sig: "HOP(TABLE t, DESCRIPTOR(ts), slide, size [, offset])",
		Doc:     "Hopping (sliding) windows; also HOP(ts, slide, size) in GROUP BY.",
		Example: "SELECT window_end, SUM(x) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end",
		Result:  "2024-01-01 00:00:02.000 1\n2024-01-01 00:00:04.000 6\n2024-01-01 00:00:06.000 9\n2024-01-01 00:00:08.000 4"},
	{Name: "CUMULATE", Kind: TableFunc, Category: catWindow, Sig: "CUMULATE(TABLE t, DESCRIPTOR(ts), step, size [, offset])",
		Doc:     "Cumulating windows: windows of one size growing by step from the same start.",
		Example: "SELECT window_end, SUM(x) FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '4' SECOND)) GROUP BY window_start, window_end",
		Result:  "2024-01-01 00:00:02.000 1\n2024-01-01 00:00:04.000 6\n2024-01-01 00:00:06.000 4\n2024-01-01 00:00:08.000 4"},
	{Name: "SESSION", Kind: TableFunc, Category: catWindow, Sig: "SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap)",
		Doc:     "Session windows closing after gap without rows; also SESSION(ts, gap) in GROUP BY.",
		Example: "SELECT window_start, window_end, COUNT(*) FROM TABLE(SESSION(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end",
		Result:  "2024-01-01 00:00:01.000 2024-01-01 00:00:09.000 4"},
	{Name: "TUMBLE_START", Kind: WindowFunc, Category: catWindow, Sig: "TUMBLE_START(ts, size)", Doc: "Start of the GROUP BY TUMBLE(ts, size) window; likewise HOP_START and SESSION_START.",
		Example: "SELECT TUMBLE_START(ts, INTERVAL '2' SECOND), COUNT(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '2' SECOND)",
		Result:  "2024-01-01 00:00:00.000 1\n2024-01-01 00:00:02.000 2\n2024-01-01 00:00:04.000 1"},
	{Name: "TUMBLE_END", Kind: WindowFunc, Category: catWindow, Sig: "TUMBLE_END(ts, size)", Doc: "End of the window; likewise HOP_END and SESSION_END.",
		Example: "SELECT TUMBLE_END(ts, INTERVAL '4' SECOND), COUNT(*) FROM t GROUP BY TUMBLE(ts, INTERVAL '4' SECOND)",
		Result:  "2024-01-01 00:00:04.000 3\n2024-01-01 00:00:08.000 1"},
	{Name: "TUMBLE_ROWTIME", Kind: WindowFunc, Category: catWindow, Sig: "TUMBLE_ROWTIME(ts, size)", Doc: "The window's time attribute (end minus 1 ms); likewise HOP_ROWTIME and SESSION_ROWTIME.",
		Example: "SELECT TUMBLE_ROWTIME(ts, INTERVAL '4' SECOND) FROM t GROUP BY TUMBLE(ts, INTERVAL '4' SECOND)",
		Result:  "2024-01-01 00:00:03.999\n2024-01-01 00:00:07.999"},
	{Name: "HOP_START", Kind: WindowFunc, Category: catWindow, Sig: "HOP_START(ts, slide, size)", Doc: "Start of the GROUP BY HOP window.",
		Example: "SELECT HOP_START(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND), COUNT(*) FROM t GROUP BY HOP(ts, INTERVAL '2' SECOND, INTERVAL '4' SECOND)",
		Result:  "2023-12-31 23:59:58.000 1\n2024-01-01 00:00:00.000 3\n2024-01-01 00:00:02.000 3\n2024-01-01 00:00:04.000 1"},
	{Name: "HOP_END", Kind: WindowFunc, Category: catWindow, Sig: "HOP_END(ts, slide, size)", Doc: "End of the GROUP BY HOP window.",
		Example: "SELECT HOP_END(ts, INTERVAL '4' SECOND, INTERVAL '4' SECOND) FROM t GROUP BY HOP(ts, INTERVAL '4' SECOND, INTERVAL '4' SECOND)",
		Result:  "2024-01-01 00:00:04.000\n2024-01-01 00:00:08.000"},
	{Name: "HOP_ROWTIME", Kind: WindowFunc, Category: catWindow, Sig: "HOP_ROWTIME(ts, slide, size)", Doc: "Time attribute of the GROUP BY HOP window.",
		Example: "SELECT HOP_ROWTIME(ts, INTERVAL '4' SECOND, INTERVAL '4' SECOND) FROM t GROUP BY HOP(ts, INTERVAL '4' SECOND, INTERVAL '4' SECOND)",
		Result:  "2024-01-01 00:00:03.999\n2024-01-01 00:00:07.999"},
	{Name: "SESSION_START", Kind: WindowFunc, Category: catWindow, Sig: "SESSION_START(ts, gap)", Doc: "Start of the GROUP BY SESSION window.",
		Example: "SELECT SESSION_START(ts, INTERVAL '5' SECOND) FROM t GROUP BY SESSION(ts, INTERVAL '5' SECOND)", Result: "2024-01-01 00:00:01.000"},
	{Name: "SESSION_END", Kind: WindowFunc, Category: catWindow, Sig: "SESSION_END(ts, gap)", Doc: "End of the GROUP BY SESSION window.",
		Example: "SELECT SESSION_END(ts, INTERVAL '5' SECOND) FROM t GROUP BY SESSION(ts, INTERVAL '5' SECOND)", Result: "2024-01-01 00:00:09.000"},
	{Name: "SESSION_ROWTIME", Kind: WindowFunc, Category: catWindow, Sig: "SESSION_ROWTIME(ts, gap)", Doc: "Time attribute of the GROUP BY SESSION window.",
		Example: "SELECT SESSION_ROWTIME(ts, INTERVAL '5' SECOND) FROM t GROUP BY SESSION(ts, INTERVAL '5' SECOND)", Result: "2024-01-01 00:00:08.999"},

	// Collections and rows
	op(catCollection, "ROW(...)", "ROW(value1 [, value2]*)", "A ROW of the values, its fields named EXPR$0, EXPR$1, ...", "", "ROW(1, 'a')", "(1, a)", FuncRow),
	op(catCollection, "ARRAY[...]", "ARRAY[value1 [, value2]*]", "An ARRAY of the values, converted to their common type.", "", "ARRAY[1, 2]", "[1, 2]", FuncArray),
	op(catCollection, "MAP[...]", "MAP[key1, value1 [, key2, value2]*]", "A MAP of the pairs; a repeated key keeps its last value.", "", "MAP['a', 1, 'b', 2]", "{a=1, b=2}", FuncMap),
	op(catCollection, "array[index], map[key]", "array '[' INT ']', map '[' key ']'", "The element at a position from 1 (NULL out of range), or the value of a key (NULL if absent).", "", "ARRAY[10, 20][2]", "20", FuncItem),
	op(catCollection, "row.field", "row.field", "A field of a ROW: r.f, t.r.f, r.f.g, or (expr).f.", "", "ROW(1, 'a').EXPR$1", "a", FuncField),
	e(catCollection, "CARDINALITY", "CARDINALITY(array), CARDINALITY(map)", "The number of elements of an ARRAY or entries of a MAP.", "", "CARDINALITY(ARRAY[1, 2, 3])", "3"),
	e(catCollection, "SPLIT", "SPLIT(string, delimiter)", "The pieces of string between the delimiters, empty ones kept; an empty delimiter splits into characters.", "", "SPLIT('a,b,,c', ',')", "[a, b, , c]"),
	e(catCollection, "STR_TO_MAP", "STR_TO_MAP(text[, listDelimiter[, keyValueDelimiter]])", "A MAP from text split into entries at listDelimiter (default ',') and each entry at keyValueDelimiter (default '='); a key without a value maps to NULL.", "The delimiters are regular expressions in Go's RE2 syntax, not Java's.", "STR_TO_MAP('a=1,b=2')['b']", "2"),
	e(catCollection, "ARRAY_CONTAINS", "ARRAY_CONTAINS(array, value)", "Whether the array holds the value (a NULL value finds a NULL element); NULL for a NULL array.", "", "ARRAY_CONTAINS(ARRAY[1, 2], 2)", "true"),
	e(catCollection, "ARRAY_POSITION", "ARRAY_POSITION(array, value)", "The 1-based position of the value's first occurrence, 0 if absent; NULL for a NULL array.", "", "ARRAY_POSITION(ARRAY['a', 'b'], 'b')", "2"),
	e(catCollection, "ARRAY_JOIN", "ARRAY_JOIN(array, delimiter[, nullReplacement])", "The string elements joined by delimiter; NULL elements skipped, or replaced by nullReplacement.", "", "ARRAY_JOIN(ARRAY['a', NULL, 'c'], '-', '?')", "a-?-c"),
	e(catCollection, "ARRAY_REVERSE", "ARRAY_REVERSE(array)", "The elements in reverse order.", "", "ARRAY_REVERSE(ARRAY[1, 2, 3])", "[3, 2, 1]"),
	e(catCollection, "ARRAY_DISTINCT", "ARRAY_DISTINCT(array)", "The first occurrence of each element, in order.", "", "ARRAY_DISTINCT(ARRAY[1, 2, 1, 3])", "[1, 2, 3]"),
	e(catCollection, "MAP_KEYS", "MAP_KEYS(map)", "The keys of a MAP, as an ARRAY.", "", "MAP_KEYS(MAP['a', 1, 'b', 2])", "[a, b]"),
	e(catCollection, "MAP_VALUES", "MAP_VALUES(map)", "The values of a MAP, as an ARRAY.", "", "MAP_VALUES(MAP['a', 1, 'b', 2])", "[1, 2]"),
	e(catCollection, "ARRAY_APPEND", "ARRAY_APPEND(array, element)", "The array with the element (NULL too) added at its end; NULL for a NULL array.", "", "ARRAY_APPEND(ARRAY[1, 2], 3)", "[1, 2, 3]"),
	e(catCollection, "ARRAY_PREPEND", "ARRAY_PREPEND(array, element)", "The array with the element (NULL too) added at its start; NULL for a NULL array.", "", "ARRAY_PREPEND(ARRAY[1, 2], 0)", "[0, 1, 2]"),
	e(catCollection, "ARRAY_REMOVE", "ARRAY_REMOVE(array, element)", "The array without every element equal to element (NULL removes the NULLs); NULL for a NULL array.", "", "ARRAY_REMOVE(ARRAY[1, 2, 1], 1)", "[2]"),
	e(catCollection, "ARRAY_SLICE", "ARRAY_SLICE(array, start[, end])", "The elements from start to end, both included: positions from 1 (0 reads as 1), negative ones from the end; end defaults to the length; empty when start is after end or both are outside; NULL if an argument is.", "", "ARRAY_SLICE(ARRAY[1, 2, 3, 4], -3, 3)", "[2, 3]"),
	e(catCollection, "ARRAY_SORT", "ARRAY_SORT(array[, ascending[, nullsFirst]])", "The elements sorted, ascending by default; NULLs first when ascending, last when descending, unless nullsFirst says; NULL if an argument is.", "", "ARRAY_SORT(ARRAY[2, NULL, 1], FALSE)", "[2, 1, NULL]"),
	e(catCollection, "ARRAY_CONCAT", "ARRAY_CONCAT(array1, ...)", "The arrays one after the other; NULL if one is NULL.", "", "ARRAY_CONCAT(ARRAY[1], ARRAY[2, 1])", "[1, 2, 1]"),
	e(catCollection, "ARRAY_UNION", "ARRAY_UNION(array1, array2)", "The distinct elements of both, in order; NULL if either is NULL.", "", "ARRAY_UNION(ARRAY[1, 2, 1], ARRAY[3, 2])", "[1, 2, 3]"),
	e(catCollection, "ARRAY_EXCEPT", "ARRAY_EXCEPT(array1, array2)", "The distinct elements of array1 not in array2, in array1's order; NULL if either is NULL.", "", "ARRAY_EXCEPT(ARRAY[1, 2, 1, 3], ARRAY[2])", "[1, 3]"),
	e(catCollection, "ARRAY_INTERSECT", "ARRAY_INTERSECT(array1, array2)", "The distinct elements of array1 also in array2, in array1's order; NULL if either is NULL.", "", "ARRAY_INTERSECT(ARRAY[3, 1, 2, 1], ARRAY[1, 3])", "[3, 1]"),
	e(catCollection, "ARRAY_MAX", "ARRAY_MAX(array)", "The largest non-NULL element; NULL for a NULL or empty array, or one of NULLs only.", "", "ARRAY_MAX(ARRAY[1, NULL, 3])", "3"),
	e(catCollection, "ARRAY_MIN", "ARRAY_MIN(array)", "The smallest non-NULL element; NULL for a NULL or empty array, or one of NULLs only.", "", "ARRAY_MIN(ARRAY[2, NULL, 1])", "1"),
	e(catCollection, "MAP_ENTRIES", "MAP_ENTRIES(map)", "The entries as an ARRAY of ROW<key, value>, in the map's order.", "", "MAP_ENTRIES(MAP['a', 1])", "[(a, 1)]"),
	e(catCollection, "MAP_FROM_ARRAYS", "MAP_FROM_ARRAYS(keys, values)", "The map of keys[i] to values[i]; a repeated key keeps its last value; arrays of different lengths fail the job; NULL if either is NULL.", "", "MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[1, 2])", "{a=1, b=2}"),
	e(catCollection, "MAP_UNION", "MAP_UNION(map1, ...)", "The maps merged, a later map's value winning for a repeated key; NULL if one is NULL.", "", "MAP_UNION(MAP['a', 1, 'b', 2], MAP['b', 3])", "{a=1, b=3}"),
	e(catCollection, "ELEMENT", "ELEMENT(array)", "The only element of a one-element ARRAY; NULL if it is empty; more elements fail the job.", "", "ELEMENT(ARRAY['x'])", "x"),

	// Catalog
	e(catCatalog, "CURRENT_DATABASE", "CURRENT_DATABASE()", "The current database: streamsql has one, default_database.", "", "CURRENT_DATABASE()", "default_database"),
}

// unsupported are Flink's built-in functions streamsql does not have,
// with the reason; using one is an error naming it.
var unsupported = map[string]string{
	"PARSE_JSON":                   "it returns VARIANT, a type streamsql does not have",
	"TRY_PARSE_JSON":               "it returns VARIANT, a type streamsql does not have",
	"OBJECT_OF":                    "it builds a structured type, which streamsql does not have",
	"OBJECT_UPDATE":                "it takes a structured type, which streamsql does not have",
	"DESCRIPTOR":                   "DESCRIPTOR(...) is only an argument of a window table function",
	"SOURCE_WATERMARK":             "streamsql's sources do not emit watermarks of their own; declare WATERMARK FOR ts AS ts - INTERVAL ...",
	"TUMBLE_PROCTIME":              "group windows over processing time are not supported; use TUMBLE_ROWTIME or the TUMBLE table function",
	"HOP_PROCTIME":                 "group windows over processing time are not supported; use HOP_ROWTIME or the HOP table function",
	"SESSION_PROCTIME":             "group windows over processing time are not supported; use SESSION_ROWTIME or the SESSION table function",
	"BITMAP_AND":                   "it takes BITMAP, a type streamsql does not have",
	"BITMAP_ANDNOT":                "it takes BITMAP, a type streamsql does not have",
	"BITMAP_BUILD":                 "it returns BITMAP, a type streamsql does not have",
	"BITMAP_CARDINALITY":           "it takes BITMAP, a type streamsql does not have",
	"BITMAP_FROM_BYTES":            "it returns BITMAP, a type streamsql does not have",
	"BITMAP_OR":                    "it takes BITMAP, a type streamsql does not have",
	"BITMAP_TO_ARRAY":              "it takes BITMAP, a type streamsql does not have",
	"BITMAP_TO_BYTES":              "it takes BITMAP, a type streamsql does not have",
	"BITMAP_TO_STRING":             "it takes BITMAP, a type streamsql does not have",
	"BITMAP_XOR":                   "it takes BITMAP, a type streamsql does not have",
	"BITMAP_BUILD_AGG":             "it returns BITMAP, a type streamsql does not have",
	"BITMAP_BUILD_CARDINALITY_AGG": "it builds a BITMAP, a type streamsql does not have",
	"BITMAP_AND_AGG":               "it takes BITMAP, a type streamsql does not have",
	"BITMAP_AND_CARDINALITY_AGG":   "it takes BITMAP, a type streamsql does not have",
	"BITMAP_OR_AGG":                "it takes BITMAP, a type streamsql does not have",
	"BITMAP_OR_CARDINALITY_AGG":    "it takes BITMAP, a type streamsql does not have",
	"BITMAP_XOR_AGG":               "it takes BITMAP, a type streamsql does not have",
	"BITMAP_XOR_CARDINALITY_AGG":   "it takes BITMAP, a type streamsql does not have",
	"RANK":                         "only ROW_NUMBER is supported as a window function",
	"DENSE_RANK":                   "only ROW_NUMBER is supported as a window function",
	"CUME_DIST":                    "only ROW_NUMBER is supported as a window function",
	"PERCENT_RANK":                 "only ROW_NUMBER is supported as a window function",
	"NTILE":                        "only ROW_NUMBER is supported as a window function",
	"LEAD":                         "it needs rows that have not arrived yet, so Flink refuses it in streaming mode; use LAG",
}

// Unsupported reports why a Flink built-in function streamsql does not
// have is missing; ok is false for names that are not Flink built-ins.
func Unsupported(name string) (reason string, ok bool) {
	reason, ok = unsupported[strings.ToUpper(name)]
	return reason, ok
}

// UnsupportedNames lists them, sorted.
func UnsupportedNames() []string {
	var out []string
	for n := range unsupported {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// UnsupportedError is the error for a call of one of them.
func UnsupportedError(name string) string {
	r, _ := Unsupported(name)
	return fmt.Sprintf("function %s is not supported: %s", strings.ToUpper(name), r)
}

// Functions returns the catalog, by category in Flink's order, then by
// name.
func Functions() []FuncInfo {
	rank := map[string]int{}
	for i, c := range categoryOrder {
		rank[c] = i
	}
	out := append([]FuncInfo(nil), catalog...)
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Category] != rank[out[j].Category] {
			return rank[out[i].Category] < rank[out[j].Category]
		}
		return false // keep the catalog's order within a category
	})
	return out
}

// FunctionNames returns the names SHOW FUNCTIONS lists: every function
// (not operator form) of the catalog, sorted.
func FunctionNames() []string {
	var out []string
	for _, f := range catalog {
		if f.Kind != OperatorForm {
			out = append(out, f.Name)
		}
	}
	sort.Strings(out)
	return out
}

// RegistryKeys returns the binder's function names, for the test that
// the catalog covers each.
func RegistryKeys() []string {
	var out []string
	for k := range registry {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// keysOf returns the registry keys of a catalog entry.
func (f FuncInfo) keysOf() []string {
	if len(f.Keys) > 0 {
		return f.Keys
	}
	if f.Kind == ScalarFunc && !f.Native {
		return []string{strings.ToLower(f.Name)}
	}
	return nil
}

// CatalogKeys returns every registry key some catalog entry names.
func CatalogKeys() []string {
	var out []string
	for _, f := range catalog {
		out = append(out, f.keysOf()...)
	}
	sort.Strings(out)
	return out
}

// FunctionsMarkdown renders docs/functions.md.
func FunctionsMarkdown() string {
	var sb strings.Builder
	sb.WriteString("# Built-in functions\n\n")
	sb.WriteString("Generated by `streamsql functions` from expr/catalog.go; `SHOW FUNCTIONS` lists the same names.\n")
	sb.WriteString("Each example is run by a test and gives the result shown. Aggregate examples run over this table:\n\n")
	sb.WriteString("```sql\n")
	for _, s := range ExampleTable {
		sb.WriteString(s + ";\n")
	}
	sb.WriteString("```\n\n")
	sb.WriteString("The *Differs from Flink* column is empty where the function behaves as Flink's.\n")
	cur := ""
	for _, f := range Functions() {
		if f.Category != cur {
			cur = f.Category
			fmt.Fprintf(&sb, "\n## %s\n\n", cur)
			sb.WriteString("| Function | Description | Example | Differs from Flink |\n|---|---|---|---|\n")
		}
		ex := "`" + f.Example + "`"
		if f.Result != "" {
			ex += " → `" + strings.ReplaceAll(f.Result, "\n", "`, `") + "`"
		}
		fmt.Fprintf(&sb, "| `%s` | %s | %s | %s |\n", mdEscape(f.Sig), mdEscape(f.Doc), mdEscape(ex), mdEscape(f.Note))
	}
	sb.WriteString("\n## Flink functions streamsql does not have\n\n")
	sb.WriteString("Calling one of these is an error that names it.\n\n| Function | Why |\n|---|---|\n")
	for _, n := range UnsupportedNames() {
		fmt.Fprintf(&sb, "| `%s` | %s |\n", n, mdEscape(unsupported[n]))
	}
	return sb.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// MatchLike reports whether s matches the SQL LIKE pattern (no escape
// character), ignoring case when ci is set.
func MatchLike(pattern, s string, ci bool) (bool, error) {
	if ci {
		pattern, s = strings.ToLower(pattern), strings.ToLower(s)
	}
	p, err := compileLike(pattern, -1)
	if err != nil {
		return false, err
	}
	return p.match(s), nil
}
