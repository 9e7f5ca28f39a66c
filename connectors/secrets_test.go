package connectors

import (
	"strings"
	"testing"
)

func TestMaskSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`CREATE TABLE t (a INT) WITH ('connector' = 'mysql', 'password' = 'hunter2', 'username' = 'app')`,
			`CREATE TABLE t (a INT) WITH ('connector' = 'mysql', 'password' = '******', 'username' = 'app')`},
		{`WITH ('PASSWORD'='it''s')`, `WITH ('PASSWORD'='******')`},
		{`WITH ('properties.ssl.key.password' = 'k', 'properties.sasl.jaas.config' = 'x y="z"')`,
			`WITH ('properties.ssl.key.password' = '******', 'properties.sasl.jaas.config' = '******')`},
		{`WITH ('url' = 'app:hunter2@tcp(db:3306)/shop')`, `WITH ('url' = 'app:******@tcp(db:3306)/shop')`},
		{`WITH ('url' = 'jdbc:mysql://app:hunter2@db:3306/shop')`, `WITH ('url' = 'jdbc:mysql://app:******@db:3306/shop')`},
		{`WITH ('url' = 'root@tcp(db:3306)/shop', 'topic' = 'a:b@c')`, `WITH ('url' = 'root@tcp(db:3306)/shop', 'topic' = 'a:******@c')`},
		{`SELECT 'password' FROM t`, `SELECT 'password' FROM t`},
	} {
		if got := MaskSecrets(c.in); got != c.want {
			t.Errorf("MaskSecrets(%s)\n got %s\nwant %s", c.in, got, c.want)
		}
		if strings.Contains(MaskSecrets(c.in), "hunter2") {
			t.Errorf("%s: password left", c.in)
		}
	}
	for _, k := range []string{"password", "Password", "sink.password", "properties.sasl.jaas.config", "s3.secret-key"} {
		if !IsSecretOption(k) {
			t.Errorf("%s is not secret", k)
		}
	}
	for _, k := range []string{"username", "url", "password-hint.enabled", "topic"} {
		if IsSecretOption(k) {
			t.Errorf("%s is secret", k)
		}
	}
}
