package expr

import (
	"testing"
)

// Every type error is found at bind time, with a clear message, and the
// ErrorFunc is given the node it is about.
func TestBindErrors(t *testing.T) {
	runBindErrs(t, []bindErrCase{
		// Names.
		{"nope", "Unknown column 'nope'", "nope"},
		{"t.nope", "Unknown column 't.nope'", "t.nope"},
		{"x.a", "Unknown column 'x.a'", "x.a"},
		{"a + nope", "Unknown column 'nope'", "nope"},
		{"id", "Column 'id' is ambiguous", "id"},
		{"UPPER(id)", "Column 'id' is ambiguous", "id"},
		{"FOO(a)", "unknown function FOO", "FOO(a)"},
		{"a + foo(1)", "unknown function FOO", "FOO(1)"},
		{"UPPER(s, s)", "wrong number of arguments to UPPER (got 2, expected 1)", "UPPER(s, s)"},
		{"REPLACE(s, 'a')", "wrong number of arguments to REPLACE (got 2, expected 3)", "REPLACE(s, 'a')"},
		{"CONCAT_WS(',')", "wrong number of arguments to CONCAT_WS (got 1, expected at least 2)", "CONCAT_WS(',')"},
		{"ROUND(a, 1, 2)", "wrong number of arguments to ROUND (got 3, expected 1 to 2)", "ROUND(a, 1, 2)"},
		{"NOW(1, 2)", "wrong number of arguments to NOW (got 2, expected 0 to 1)", "NOW(1, 2)"},

		// Operators.
		{"s + 1", "cannot apply '+' to STRING and INT", "s+1"},
		{"a * s", "cannot apply '*' to INT and STRING", "a*s"},
		{"flag - 1", "cannot apply '-' to BOOLEAN and INT", "flag-1"},
		{"a + (s || 'x')", "cannot apply 'OR' to STRING and STRING (|| is OR unless PIPES_AS_CONCAT is set; use CONCAT)", "s OR 'x'"},
		{"ts + 1", "cannot apply '+' to TIMESTAMP(3) and INT", "ts+1"},
		{"ts - ts", "cannot apply '-' to TIMESTAMP(3) and TIMESTAMP(3)", "ts-ts"},
		{"a DIV d", "cannot apply 'DIV' to INT and DOUBLE", "a DIV d"},
		{"a % s", "cannot apply '%' to INT and STRING", "a%s"},
		{"-s", "cannot apply '-' to STRING", "-s"},
		{"+ts", "cannot apply '+' to TIMESTAMP(3)", "+ts"},
		{"a & 1", "operator & is not supported", "a&1"},
		{"~a", "operator ~ is not supported", "~a"},
		{"a AND flag", "cannot apply 'AND' to INT and BOOLEAN", "a AND flag"},
		{"flag OR s", "cannot apply 'OR' to BOOLEAN and STRING", "flag OR s"},
		{"NOT a", "cannot apply 'NOT' to INT", "NOT a"},
		{"s IS TRUE", "IS TRUE expects BOOLEAN, got STRING", "s IS TRUE"},
		{"a IS NOT FALSE", "IS FALSE expects BOOLEAN, got INT", "a IS NOT FALSE"},

		// Comparisons: STRING against a number needs an explicit CAST.
		{"s = 1", "cannot apply '=' to STRING and INT", "s=1"},
		{"a > s", "cannot apply '>' to INT and STRING", "a>s"},
		{"a < '5'", "cannot apply '<' to INT and STRING", "a<'5'"},
		{"price <=> s", "cannot apply '<=>' to DECIMAL(10, 2) and STRING", "price<=>s"},
		{"flag = 1", "cannot apply '=' to BOOLEAN and INT", "flag=1"},
		{"ts = 5", "cannot apply '=' to TIMESTAMP(3) and INT", "ts=5"},
		{"ts > 'garbage'", "cannot convert 'garbage' to TIMESTAMP(3)", "ts>'garbage'"},
		{"dt = '2024-02-30'", "cannot convert '2024-02-30' to DATE", "dt='2024-02-30'"},
		{"ts = s", "cannot compare STRING with TIMESTAMP(3) without an explicit CAST", "ts=s"},
		{"a IN (1, 'x')", "cannot apply 'IN' to INT and STRING", "'x'"},
		{"a BETWEEN 1 AND 'x'", "cannot apply 'BETWEEN' to INT and STRING", "a BETWEEN 1 AND 'x'"},
		{"a LIKE 'x'", "cannot apply 'LIKE' to INT and STRING", "a LIKE 'x'"},
		{"s LIKE 'x!' ESCAPE '!'", "LIKE pattern \"x!\" ends with the escape character", "'x!'"},
		{"s REGEXP '('", "invalid regular expression \"(\": error parsing regexp: missing closing ): `(`", "'('"},
		{"NULLIF(a, s)", "NULLIF: cannot apply '=' to INT and STRING", "NULLIF(a, s)"},

		// CASE and friends.
		{"CASE WHEN a THEN 1 END", "CASE WHEN expects BOOLEAN, got INT", "a"},
		{"CASE WHEN flag THEN 1 ELSE 'x' END", "CASE has incompatible types INT and STRING", "CASE WHEN flag THEN 1 ELSE 'x' END"},
		{"CASE a WHEN 'x' THEN 1 END", "CASE: cannot apply '=' to INT and STRING", "'x'"},
		{"COALESCE(a, s)", "COALESCE has incompatible types INT and STRING", "COALESCE(a, s)"},
		{"IFNULL(ts, 1)", "IFNULL has incompatible types TIMESTAMP(3) and INT", "IFNULL(ts, 1)"},
		{"IF(a, 1, 2)", "IF expects BOOLEAN as argument 1, got INT", "a"},
		{"IF(flag, 1, 'x')", "IF has incompatible types INT and STRING", "IF(flag, 1, 'x')"},
		{"GREATEST(a, s)", "GREATEST has incompatible types INT and STRING", "GREATEST(a, s)"},

		// Function argument types name the function and point at the argument.
		{"UPPER(big)", "UPPER expects STRING, got BIGINT", "big"},
		{"LOWER(ts)", "LOWER expects STRING, got TIMESTAMP(3)", "ts"},
		{"CHAR_LENGTH(a)", "CHAR_LENGTH expects STRING, got INT", "a"},
		{"CONCAT(s, a)", "CONCAT expects STRING as argument 2, got INT", "a"},
		{"SUBSTRING(s, 'x')", "SUBSTRING expects INT as argument 2, got STRING", "'x'"},
		{"SUBSTRING(a, 1)", "SUBSTRING expects STRING as argument 1, got INT", "a"},
		{"SUBSTRING(s, 1.5)", "SUBSTRING expects INT as argument 2, got DECIMAL(2, 1)", "1.5"},
		{"TRIM(a)", "TRIM expects STRING, got INT", "a"},
		{"TRIM(BOTH a FROM s)", "TRIM expects STRING as argument 2, got INT", "a"},
		{"REPLACE(s, 1, 'x')", "REPLACE expects STRING as argument 2, got INT", "1"},
		{"ABS(s)", "ABS expects a number, got STRING", "s"},
		{"ROUND(s)", "ROUND expects a number, got STRING", "s"},
		{"ROUND(d, a)", "ROUND expects an integer literal as argument 2, got INT", "a"},
		{"FLOOR(ts)", "FLOOR expects a number, got TIMESTAMP(3) (write FLOOR(ts TO unit) to round a time)", "ts"},
		{"POWER(s, 2)", "POWER expects a number as argument 1, got STRING", "s"},
		{"LPAD(s, '3', 'x')", "LPAD expects INT as argument 2, got STRING", "'3'"},
		{"DATE_FORMAT(a, 'yyyy')", "DATE_FORMAT expects DATE or TIMESTAMP as argument 1, got INT", "a"},
		{"DATE_FORMAT(ts, 5)", "DATE_FORMAT expects STRING as argument 2, got INT", "5"},
		{"DATE_FORMAT(ts, 'yyyy b')", "DATE_FORMAT: unsupported letter 'b' in date pattern \"yyyy b\"", "'yyyy b'"},
		{"DATE_FORMAT(ts, 'yyyy z')", "DATE_FORMAT: pattern letter 'z' in \"yyyy z\" needs a time zone, which TIMESTAMP does not have", "'yyyy z'"},
		{"TO_TIMESTAMP(s, 'yyyy''')", "TO_TIMESTAMP: unterminated quote in date pattern \"yyyy'\"", "'yyyy'''"},
		{"TO_TIMESTAMP(a)", "TO_TIMESTAMP expects STRING, got INT", "a"},
		{"YEAR(a)", "YEAR expects DATE or TIMESTAMP, got INT", "a"},
		{"YEAR('nope')", "YEAR: cannot convert 'nope' to DATE", "'nope'"},
		{"EXTRACT(YEAR FROM s)", "EXTRACT expects DATE or TIMESTAMP as argument 2, got STRING", "s"},
		{"EXTRACT(DAY_HOUR FROM ts)", "EXTRACT: unsupported unit DAY_HOUR", "DAY_HOUR"},
		{"TIMESTAMPDIFF(SECOND, a, ts)", "TIMESTAMPDIFF expects DATE or TIMESTAMP as argument 2, got INT", "a"},
		{"TIMESTAMPADD(SECOND, s, ts)", "TIMESTAMPADD expects INT as argument 2, got STRING", "s"},
		{"DATE_ADD(s, INTERVAL 1 DAY)", "DATE_ADD expects DATE or TIMESTAMP as argument 1, got STRING", "s"},
		{"ts + INTERVAL 'abc' SECOND", "invalid INTERVAL 'abc' SECOND", "'abc'"},
		{"ts + INTERVAL '1:2:3' MINUTE_SECOND", "invalid INTERVAL '1:2:3' MINUTE TO SECOND", "'1:2:3'"},
		{"ts + INTERVAL '1.5' DAY", "invalid INTERVAL '1.5' DAY", "'1.5'"},
		{"ts + INTERVAL flag DAY", "INTERVAL expects a number or a string, got BOOLEAN", "flag"},
		{"__floor_to(ts, 'FORTNIGHT')", "FLOOR: unsupported unit FORTNIGHT", "'FORTNIGHT'"},
		{"__ceil_to(a, 'HOUR')", "CEIL expects DATE or TIMESTAMP as argument 1, got INT", "a"},
		{"__interval('1-12', 'YEAR_MONTH')", "INTERVAL '1-12' YEAR TO MONTH: the months must be 0..11", "__INTERVAL('1-12', 'YEAR_MONTH')"},
		{"__interval('1', 'DAY') + __interval('1', 'MONTH')", "cannot apply '+' to INTERVAL DAY(2) and INTERVAL MONTH", "__INTERVAL('1', 'DAY')+__INTERVAL('1', 'MONTH')"},
		{"TIME '10:00:00' + INTERVAL '1' MONTH", "a TIME cannot be moved by a year-month interval (YEAR, QUARTER or MONTH)", "DATE_ADD(TIME '10:00:00', INTERVAL '1' MONTH)"},
		{"EXTRACT(YEAR FROM TIME '10:00:00')", "EXTRACT: unit YEAR does not apply to TIME (HOUR, MINUTE, SECOND, MILLISECOND, MICROSECOND and NANOSECOND do)", "YEAR"},
		{"__interval('1', 'FOO')", "unsupported interval unit FOO", "'FOO'"},
		{"__interval('x', 'SECOND')", "invalid INTERVAL 'x' SECOND", "'x'"},
		{"TO_TIMESTAMP_LTZ(a, 10)", "TO_TIMESTAMP_LTZ expects a precision from 0 to 9, got 10", "10"},
		{"FROM_UNIXTIME(s)", "FROM_UNIXTIME expects a number, got STRING", "s"},

		// Casts.
		{"__cast(a, 'FOO')", "unsupported type FOO", "'FOO'"},
		{"__cast(a, s)", "CAST target type must be a type name", "s"},
		{"__cast(flag, 'DATE')", "cannot cast BOOLEAN to DATE", "__CAST(flag, 'DATE')"},
		{"__try_cast(ts, 'INT')", "cannot cast TIMESTAMP(3) to INT", "__TRY_CAST(ts, 'INT')"},
		{"CAST(ts AS SIGNED)", "cannot cast TIMESTAMP(3) to BIGINT", "CAST(ts AS SIGNED)"},
		{"CAST(a AS DATE)", "cannot cast INT to DATE", "CAST(a AS DATE)"},
		{"CAST(a AS TIME)", "cannot cast INT to TIME(0)", "CAST(a AS TIME)"},
		{"CAST(DATE '2024-01-01' AS TIME)", "cannot cast DATE to TIME(0)", "CAST(DATE '2024-01-01' AS TIME)"},
		{"CAST(a AS JSON)", "CAST to JSON is not supported", "CAST(a AS JSON)"},

		// Literals.
		{"TIME '24:00:00'", "invalid TIME literal '24:00:00': write HH:mm:ss[.fffffffff]", "TIME '24:00:00'"},
		{"TIMESTAMP '2024-13-01 00:00:00'", "invalid TIMESTAMP literal '2024-13-01 00:00:00'", "TIMESTAMP '2024-13-01 00:00:00'"},
		{"TIMESTAMP '2024-01-01 00:00:00.1234567891'", "invalid TIMESTAMP literal '2024-01-01 00:00:00.1234567891'", "TIMESTAMP '2024-01-01 00:00:00.1234567891'"},
		{"DATE '2024-02-30'", "invalid DATE literal '2024-02-30'", "DATE '2024-02-30'"},
		{"DATE '2024-02-01 10:00:00'", "invalid DATE literal '2024-02-01 10:00:00'", "DATE '2024-02-01 10:00:00'"},
		{"TIMESTAMP '3000-01-01 00:00:00'", "TIMESTAMP literal '3000-01-01 00:00:00' is out of range", "TIMESTAMP '3000-01-01 00:00:00'"},
		{"1.234567890123456789012345678901234567890123", "numeric literal 1.234567890123456789012345678901234567890123 exceeds the maximum DECIMAL precision 38", "1.234567890123456789012345678901234567890123"},
		{"b'101'", "bit literals are not supported; write bytes as X'0a1b'", "b'101'"},

		// Things that belong to the planner.
		{"SUM(a)", "aggregate function SUM is not allowed here", "SUM(a)"},
		{"a + COUNT(*)", "aggregate function COUNT is not allowed here", "COUNT(1)"},
		{"MAX(a) > 1", "aggregate function MAX is not allowed here", "MAX(a)"},
		{"ROW_NUMBER() OVER (ORDER BY a)", "window function ROW_NUMBER is not allowed here", "ROW_NUMBER() OVER (ORDER BY a)"},
		{"a IN (SELECT 1)", "subqueries are not supported", "a IN (SELECT 1)"},
		{"a = (SELECT 1)", "subqueries are not supported", "(SELECT 1)"},
		{"EXISTS (SELECT 1)", "subqueries are not supported", "EXISTS (SELECT 1)"},
		{"a = ANY (SELECT 1)", "subqueries are not supported", "a=ANY (SELECT 1)"},
		{"@x", "variables are not supported", "@x"},
		{"(1, 2)", "write a row constructor as ROW(a, b)", "ROW(1,2)"},
		{"s COLLATE utf8mb4_bin", "COLLATE is not supported", "s COLLATE utf8mb4_bin"},
	})
}

// A nil ErrorFunc still produces errors.
func TestBindNilErrorFunc(t *testing.T) {
	_, err := Bind(parseExpr(t, "nope + 1"), &Scope{Columns: testCols}, nil)
	if err == nil || err.Error() != "Unknown column 'nope'" {
		t.Fatalf("got %v", err)
	}
	_, err = Bind(parseExpr(t, "1 + 1"), nil, nil)
	if err != nil {
		t.Fatalf("nil scope: %v", err)
	}
}
