package engine

import (
	"strings"

	"github.com/streamsql/streamsql/connectors"
)

// HelpText is what HELP prints; its connector list comes from the
// connectors registry.
func HelpText() string {
	return helpStatements + "\nConnectors: " + strings.Join(connectors.Names(), ", ") + "."
}

const helpStatements = `Statements (end each with ;):
  CREATE TABLE t (...) WITH ('connector' = '...', ...)   declare a source or sink table
  CREATE VIEW v AS SELECT ...                             name a query
  DROP TABLE [IF EXISTS] t / DROP VIEW [IF EXISTS] v      remove it
  SHOW TABLES / DESCRIBE t / SHOW CREATE TABLE t          inspect the catalog
  SHOW FUNCTIONS [LIKE 'pattern']                         list the built-in functions
  SELECT ...                                              run a continuous query and show its changelog
  INSERT INTO t SELECT ... / INSERT INTO t VALUES ...     start a job writing into t
  EXPLAIN SELECT ... / EXPLAIN INSERT ...                 show the plan with changelog modes
  SET 'key' = 'value' / SET / RESET 'key' / RESET         session options (SET lists them)
  SHOW JOBS / STOP JOB 'id'                               manage running jobs
  HELP                                                    this text`
