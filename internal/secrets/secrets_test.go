package secrets

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// Each expectation is written by hand from the rule it exercises.
func TestMask(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// Option values by key.
		{`CREATE TABLE t (a INT) WITH ('connector' = 'mysql', 'password' = 'hunter2', 'username' = 'app')`,
			`CREATE TABLE t (a INT) WITH ('connector' = 'mysql', 'password' = '******', 'username' = 'app')`},
		{`WITH ('PASSWORD'='it''s')`, `WITH ('PASSWORD'='******')`},
		{`WITH ('connector'='mysql' 'password'='hunter2')`, `WITH ('connector'='mysql' 'password'='******')`}, // '=' typed, ',' forgotten
		{`WITH ('password' 'hunter2')`, `WITH ('password' '******')`},
		{`WITH ('password' = 'hunter2`, `WITH ('password' = '******`}, // unterminated: to the end
		{`WITH ('properties.ssl.key.password' = 'k', 'properties.sasl.jaas.config' = 'x y="z"')`,
			`WITH ('properties.ssl.key.password' = '******', 'properties.sasl.jaas.config' = '******')`},
		{`{"password": "hunter2", "url": "x"}`, `{"password": "******", "url": "x"}`},
		// User information, '@' and ':' inside the password.
		{`WITH ('url' = 'app:hunter2@tcp(db:3306)/shop')`, `WITH ('url' = 'app:******@tcp(db:3306)/shop')`},
		{`'u:p@ss@tcp(127.0.0.1:3306)/db'`, `'u:******@tcp(127.0.0.1:3306)/db'`},
		{`'mysql://u:p@ss:w@h/db'`, `'mysql://u:******@h/db'`},
		{`WITH ('url' = 'jdbc:mysql://app:hunter2@db:3306/shop')`, `WITH ('url' = 'jdbc:mysql://app:******@db:3306/shop')`},
		{`WITH ('url' = 'root@tcp(db:3306)/shop', 'topic' = 'a:b@c')`, `WITH ('url' = 'root@tcp(db:3306)/shop', 'topic' = 'a:******@c')`},
		{`dial tcp: lookup u:p@ss@host: no such host`, `dial tcp: lookup u:******@host: no such host`},
		{`'u:it''s@tcp(h)/db'`, `'u:******@tcp(h)/db'`},
		// Query parameters and JAAS configs.
		{`'jdbc:mysql://h:3306/db?user=u&password=S3cr3t'`, `'jdbc:mysql://h:3306/db?user=u&password=******'`},
		{`'jdbc:mysql://h:3306/db?password=S3cr3t&user=u'`, `'jdbc:mysql://h:3306/db?password=******&user=u'`},
		{`PlainLoginModule required username="u" password="x y";`, `PlainLoginModule required username="u" password="******";`},
		{`'a' = 'PlainLoginModule required username=''u'' password=''x'';'`, `'a' = 'PlainLoginModule required username=''u'' password=''******'';'`},
		{`level=WARN msg=retry token=abc123 n=1`, `level=WARN msg=retry token=****** n=1`},
		// Left alone.
		{`SELECT 'password' FROM t`, `SELECT 'password' FROM t`},
		{`SELECT * FROM t WHERE password = 'x'`, `SELECT * FROM t WHERE password = 'x'`},
		{`SET 'password-hint.enabled' = 'true'`, `SET 'password-hint.enabled' = 'true'`},
		{`TIMESTAMP '2024-01-01 10:00:00', a@b:9092, 'jdbc:mysql://h:3306/db'`, `TIMESTAMP '2024-01-01 10:00:00', a@b:9092, 'jdbc:mysql://h:3306/db'`},
	} {
		if got := Mask(c.in); got != c.want {
			t.Errorf("Mask(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
		if Mask(c.want) != c.want {
			t.Errorf("Mask is not idempotent on %s: %s", c.want, Mask(c.want))
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for _, k := range []string{"password", "Password", "sink.password", "properties.sasl.jaas.config", "s3.secret-key",
		"properties.ssl.truststore.password", "token", "auth.token", "api_key", "client-secret", "pwd"} {
		if !IsSecretKey(k) {
			t.Errorf("%s is not secret", k)
		}
	}
	for _, k := range []string{"username", "url", "password-hint.enabled", "topic", "key.fields", "key.format", "user"} {
		if IsSecretKey(k) {
			t.Errorf("%s is secret", k)
		}
	}
}

// A syntax error quotes one token: the value alone, without its key.
func TestKnownMasksValuesQuotedAlone(t *testing.T) {
	sql := "CREATE TABLE t (a INT) WITH ('connector' = 'kafka',\n  'password' 'S3cr3t', 'x' = 'ab')"
	k := Values(sql)
	msg := `syntax error near "'S3cr3t'": option 'password' is 'S3cr3t'`
	if got := k.Mask(msg); strings.Contains(got, "S3cr3t") {
		t.Fatalf("leaked: %s", got)
	}
	short := Values(`WITH ('password' = 'ab')`)
	if got := short.Mask(`near "'ab'" in "about"`); got != `near "'******'" in "about"` {
		t.Fatalf("short secret: %s", got)
	}
}

func TestMaskLineKeepsTheCaretOnItsToken(t *testing.T) {
	src := "CREATE TABLE t WITH ('password' = 'a-long-secret', 'x' = 'y' oops)"
	spans := Spans(src)
	col := strings.Index(src, "oops") + 1
	line, c := MaskLine(src, 0, spans, col)
	if strings.Contains(line, "a-long-secret") || []rune(line)[c-1:][0] != 'o' || !strings.HasPrefix(string([]rune(line)[c-1:]), "oops") {
		t.Fatalf("line %q col %d", line, c)
	}
	// A caret inside the secret points at its start.
	col = strings.Index(src, "secret") + 1
	line, c = MaskLine(src, 0, spans, col)
	if !strings.HasPrefix(string([]rune(line)[c-1:]), Redacted) {
		t.Fatalf("line %q col %d", line, c)
	}
	// A line of a larger text.
	text := "x\n" + src
	line, c = MaskLine(src, 2, Spans(text), strings.Index(src, "oops")+1)
	if !strings.HasPrefix(string([]rune(line)[c-1:]), "oops") {
		t.Fatalf("line %q col %d", line, c)
	}
}

func TestHandlerMasksRecords(t *testing.T) {
	var sb strings.Builder
	log := slog.New(Handler(slog.NewTextHandler(&sb, nil))).With("dsn", "u:p@ss@tcp(h)/db")
	log.Warn("connecting to mysql://u:S3cr3t@h/db failed", "error", errors.New("password=S3cr3t rejected"),
		"password", "S3cr3t", slog.Group("g", "url", "jdbc:mysql://h/db?password=S3cr3t"))
	out := sb.String()
	for _, s := range []string{"S3cr3t", "p@ss"} {
		if strings.Contains(out, s) {
			t.Fatalf("log leaks %s: %s", s, out)
		}
	}
	if !strings.Contains(out, "mysql://u:******@h/db") || !strings.Contains(out, "password=******") {
		t.Fatalf("log: %s", out)
	}
}
