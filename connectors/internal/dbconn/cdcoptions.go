package dbconn

import (
	"fmt"
	"regexp"

	sessconfig "github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
)

// ServerOptions declares the server options that open the CDC
// connectors' lists: 'hostname', 'port' (default port), 'username' (who
// needs the privileges userNeeds names) and 'password'. server names
// the database in the host's description ("PostgreSQL").
func ServerOptions(server, port, userNeeds string) []connectors.OptionDef {
	return []connectors.OptionDef{
		{Key: "hostname", Required: true, Description: "the " + server + " server's host"},
		{Key: "port", Kind: sessconfig.Int, Min: 1, Default: port, Description: "the server's port"},
		{Key: "username", Required: true, Description: "the user; it needs " + userNeeds},
		{Key: "password", Description: "the password. Never shown by SHOW CREATE TABLE, EXPLAIN, logs or errors"},
	}
}

// NameRegexps compiles the options keys[i] into *dst[i], each a regular
// expression matched against whole names (anchored at both ends).
func NameRegexps(o map[string]string, keys []string, dst ...**regexp.Regexp) error {
	for i, key := range keys {
		r, err := regexp.Compile("^(?:" + o[key] + ")$")
		if err != nil {
			return fmt.Errorf("option '%s' is not a valid regular expression: %v", key, err)
		}
		*dst[i] = r
	}
	return nil
}
