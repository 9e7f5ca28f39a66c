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
  CREATE TABLE t (...) WITH ('connector' = '...', ...)   declare a source or sink table (also ... LIKE src)
  CREATE [TEMPORARY] VIEW v AS SELECT ...                 name a query
  ALTER TABLE t RENAME TO / SET (...) / ADD / DROP ...    change a table
  DROP TABLE [IF EXISTS] t / DROP VIEW [IF EXISTS] v      remove it
  SHOW TABLES / VIEWS / COLUMNS FROM t [LIKE 'p']         inspect the catalog
  DESCRIBE t / SHOW CREATE TABLE t / SHOW CREATE VIEW v
  CREATE / USE / SHOW / DROP CATALOG, DATABASE            catalogs ('generic_in_memory') and databases
  SHOW CURRENT CATALOG / SHOW CURRENT DATABASE
  SHOW FUNCTIONS [LIKE 'pattern']                         list the built-in functions
  SELECT ...                                              run a continuous query and show its changelog
  INSERT INTO t SELECT ... / INSERT INTO t VALUES ...     start a job writing into t
  EXECUTE STATEMENT SET BEGIN INSERT ...; ... END         several INSERTs as one job sharing its sources
  BEGIN STATEMENT SET; INSERT ...; ... END                the same, statement by statement
  EXPLAIN [PLAN FOR | CHANGELOG_MODE | JSON_EXECUTION_PLAN] SELECT / INSERT ...
                                                          show the plan with changelog modes
  SET 'key' = 'value' / SET / RESET 'key' / RESET         session options (SET lists them)
  SHOW JOBS / STOP JOB 'id'                               manage running jobs
  HELP                                                    this text`
