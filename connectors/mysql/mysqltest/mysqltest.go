// Package mysqltest finds the MySQL server that tests and benchmarks
// use: STREAMSQL_TEST_MYSQL_DSN, by default the local MariaDB's
// root@tcp(127.0.0.1:3306)/test. Without a reachable server a test is
// skipped with a loud message, except under CI=true, where it fails.
package mysqltest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// DefaultDSN is the server tests use when STREAMSQL_TEST_MYSQL_DSN is
// not set.
const DefaultDSN = "root@tcp(127.0.0.1:3306)/test"

// DSN returns the test server's DSN, or skips (fails under CI=true) when
// the server does not answer.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("STREAMSQL_TEST_MYSQL_DSN")
	if dsn == "" {
		dsn = DefaultDSN
	}
	db, err := sql.Open("mysql", dsn)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		err = db.PingContext(ctx)
		cancel()
		db.Close()
	}
	if err != nil {
		msg := fmt.Sprintf("\n*** MYSQL TESTS SKIPPED: no MySQL server reachable through STREAMSQL_TEST_MYSQL_DSN (%v).\n*** Start one (see .ci/run) or set the DSN; under CI=true this fails.", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// Database creates the database name on the test server if it does not
// exist and returns the DSN that uses it (skipping like DSN when there is
// no server). Tests that create fixed table names use a database of
// their own, so that they never touch another's tables.
func Database(t testing.TB, name string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = ""
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "`"); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	return cfg.FormatDSN()
}
