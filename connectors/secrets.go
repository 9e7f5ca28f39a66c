package connectors

import (
	"regexp"
	"strings"
)

// Secret options: a WITH option whose key is 'password', ends in
// '.password' or '-password', or names a secret, key, token or JAAS
// config, never appears in SHOW CREATE TABLE, EXPLAIN, logs or errors.
// Connectors must not format such a value into an error either.
//
// The catalog keeps a table's DDL text already masked (MaskSecrets), so
// nothing that prints it can leak the value.

// IsSecretOption reports whether an option key holds a secret.
func IsSecretOption(key string) bool {
	k := strings.ToLower(key)
	if k == "password" || strings.HasSuffix(k, ".password") || strings.HasSuffix(k, "-password") ||
		strings.HasSuffix(k, ".secret") || strings.HasSuffix(k, "secret-key") ||
		strings.HasSuffix(k, ".token") || strings.HasSuffix(k, "sasl.jaas.config") {
		return true
	}
	return false
}

// Mask is what a secret is shown as.
const Mask = "******"

var (
	// 'key' = 'value' in a WITH clause; a quote inside is doubled.
	optionRe = regexp.MustCompile(`'((?:[^']|'')*)'(\s*=\s*)'((?:[^']|'')*)'`)
	// user:password@ inside a URL or DSN value.
	userinfoRe = regexp.MustCompile(`([A-Za-z0-9_.~%!$&*+,;=-]*):([^@/'\s]*)@`)
)

// MaskSecrets returns SQL text with the values of secret options
// replaced by Mask, and passwords inside URL or DSN option values
// ('user:pass@host', 'user:pass@tcp(host)') masked too.
func MaskSecrets(sql string) string {
	return optionRe.ReplaceAllStringFunc(sql, func(m string) string {
		p := optionRe.FindStringSubmatch(m)
		key, eq, val := p[1], p[2], p[3]
		switch {
		case IsSecretOption(key):
			val = Mask
		case strings.Contains(val, "@"):
			val = userinfoRe.ReplaceAllStringFunc(val, func(u string) string {
				q := userinfoRe.FindStringSubmatch(u)
				if q[2] == "" {
					return u
				}
				return q[1] + ":" + Mask + "@"
			})
		}
		return "'" + key + "'" + eq + "'" + val + "'"
	})
}
