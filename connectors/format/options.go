package format

import (
	"github.com/streamsql/streamsql/config"
	"github.com/streamsql/streamsql/connectors"
)

// JSONOptionDefs are the options of the json format, Flink's names.
var JSONOptionDefs = []connectors.OptionDef{
	{Key: "json.ignore-parse-errors", Kind: config.Bool, Default: "false", Description: "skip (and count) malformed records instead of failing"},
	{Key: "json.fail-on-missing-field", Kind: config.Bool, Default: "false", Description: "a record without a field for some column is malformed"},
}

// CSVOptionDefs are the options of the csv format, Flink's names.
var CSVOptionDefs = []connectors.OptionDef{
	{Key: "csv.ignore-parse-errors", Kind: config.Bool, Default: "false", Description: "skip (and count) malformed records instead of failing"},
	{Key: "csv.field-delimiter", Default: ",", Description: "the field delimiter: one character, or '\\t' for a tab"},
	{Key: "csv.quote-character", Default: "\"", Description: "the character that encloses quoted fields"},
	{Key: "csv.disable-quote-character", Kind: config.Bool, Default: "false", Description: "'true' reads quote characters as plain text"},
	{Key: "csv.allow-comments", Kind: config.Bool, Default: "false", Description: "skip records (lines) that start with '#'"},
	{Key: "csv.escape-character", Description: "a character that makes the next one literal (none by default)"},
	{Key: "csv.null-literal", Description: "a field text that reads as NULL (none by default)"},
	{Key: "csv.array-element-delimiter", Default: ";", Description: "the string between the elements of an ARRAY and the fields of a ROW inside one field"},
}

// OptionDefs concatenates option lists, for a connector's Options.
func OptionDefs(lists ...[]connectors.OptionDef) []connectors.OptionDef {
	var out []connectors.OptionDef
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}
