package connectors

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/streamsql/streamsql/config"
)

// The typed readers below are the one way a connector reads a typed
// option. They parse with config's parsers (config.ParseBool,
// config.ParseDuration), so a boolean or a duration means the same in a
// WITH clause as in SET, and their errors name the option the same way
// everywhere. CheckOptions runs them on every declared option, so a
// value of the wrong type is refused when the table is used, whatever the
// connector does with it.

// Bool reads a boolean option: 'true' or 'false', in any case; def when
// the option is absent.
func Bool(opts map[string]string, key string, def bool) (bool, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	b, err := config.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("option '%s' must be 'true' or 'false', got '%s'", key, v)
	}
	return b, nil
}

// Duration reads a duration option with Flink's rule (a bare number is
// milliseconds); def when the option is absent.
func Duration(opts map[string]string, key string, def time.Duration) (time.Duration, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	d, err := config.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("option '%s': %v", key, err)
	}
	return d, nil
}

// Int reads an integer option of at least min (0 or 1); def when the
// option is absent.
func Int(opts map[string]string, key string, def, min int) (int, error) {
	v, ok := opts[key]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < min {
		what := "a positive integer"
		if min <= 0 {
			what = "a non-negative integer"
		}
		return 0, fmt.Errorf("option '%s' must be %s, got '%s'", key, what, v)
	}
	return n, nil
}

// Enum reads an option that takes one of d.Enum, compared without case;
// the declared default when absent. It returns the value as the
// declaration spells it.
func enumValue(d OptionDef, opts map[string]string) (string, error) {
	v, ok := opts[d.Key]
	if !ok {
		return d.Default, nil
	}
	for _, e := range d.Enum {
		if strings.EqualFold(v, e) {
			return e, nil
		}
	}
	return "", fmt.Errorf("option '%s' must be %s, got '%s'", d.Key, quoteOr(d.Enum), v)
}

// quoteOr renders 'a', 'b' or 'c'.
func quoteOr(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + v + "'"
	}
	if len(q) <= 1 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// checkValue checks the value of a declared option against its kind.
func checkValue(d OptionDef, key string, opts map[string]string) error {
	switch d.Kind {
	case config.Bool:
		_, err := Bool(opts, key, false)
		return err
	case config.Duration:
		_, err := Duration(opts, key, 0)
		return err
	case config.Int:
		_, err := Int(opts, key, 0, d.Min)
		return err
	case config.Enum:
		if d.Prefix {
			_, err := enumValue(OptionDef{Key: key, Enum: d.Enum}, opts)
			return err
		}
		_, err := enumValue(d, opts)
		return err
	}
	return nil
}

// KindName is how the options reference names a kind.
func KindName(d OptionDef) string {
	switch d.Kind {
	case config.Bool:
		return "Boolean"
	case config.Duration:
		return "Duration"
	case config.Int:
		return "Integer"
	case config.Enum:
		return "Enum"
	}
	return "String"
}
