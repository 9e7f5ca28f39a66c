package repl

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

// Vars are script variables: --var name=value on the command line.
type Vars map[string]string

// String implements flag.Value.
func (v Vars) String() string { return "" }

// Set implements flag.Value: it takes name=value.
func (v Vars) Set(kv string) error {
	k, val, ok := strings.Cut(kv, "=")
	k = strings.TrimSpace(k)
	if !ok || !varName.MatchString(k) {
		return fmt.Errorf("--var wants name=value with a name of letters, digits, '_' and '.', got %q", kv)
	}
	v[k] = val
	return nil
}

var (
	varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)
	varRef  = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_.]*)\}`)
)

// Substitute replaces ${name} in a script by the value given with
// --var name=value, so that one script serves several environments
// (broker addresses, database URLs, directories). A ${name} without a
// --var is left as written, with a warning, since it may be meant
// literally inside a string.
func Substitute(script string, vars Vars, warn io.Writer, file string) string {
	warned := map[string]bool{}
	return varRef.ReplaceAllStringFunc(script, func(ref string) string {
		name := varRef.FindStringSubmatch(ref)[1]
		if v, ok := vars[name]; ok {
			return v
		}
		if !warned[name] {
			warned[name] = true
			fmt.Fprintf(warn, "[WARN] %s uses ${%s}, but no --var %s=... was given; it stays as written\n", file, name, name)
		}
		return ref
	})
}
