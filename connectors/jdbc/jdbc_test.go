package jdbc_test

import (
	"strings"
	"testing"

	"github.com/streamsql/streamsql/connectors"
	_ "github.com/streamsql/streamsql/connectors/mysql"
	_ "github.com/streamsql/streamsql/connectors/postgres"
	"github.com/streamsql/streamsql/types"
)

// The URL's subprotocol picks the dialect; a URL that names none, or an
// unknown one, gets an error that does not quote it (it may hold a
// password).
func TestDispatch(t *testing.T) {
	c, err := connectors.Lookup("jdbc")
	if err != nil {
		t.Fatal(err)
	}
	sink := func(url string, extra map[string]string) error {
		opts := map[string]string{"connector": "jdbc", "url": url, "table-name": "t"}
		for k, v := range extra {
			opts[k] = v
		}
		_, err := c.(connectors.SinkConnector).NewSink(&connectors.Table{Name: "t",
			Columns: []connectors.Column{{Name: "k", Type: types.TypeBigInt}}, PrimaryKey: []int{0}, Options: opts}, nil)
		return err
	}
	if err := sink("jdbc:postgresql://h:5432/db?user=u", nil); err != nil {
		t.Errorf("postgresql: %v", err)
	}
	if err := sink("jdbc:mysql://h:3306/db", nil); err != nil {
		t.Errorf("mysql: %v", err)
	}
	// Each dialect checks its own options: 'driver' is PostgreSQL's.
	if err := sink("jdbc:postgresql://h:5432/db?user=u", map[string]string{"driver": "com.mysql.cj.jdbc.Driver"}); err == nil ||
		!strings.Contains(err.Error(), "is not PostgreSQL's driver") {
		t.Errorf("postgresql with MySQL's driver: %v", err)
	}
	for url, want := range map[string]string{
		"jdbc:oracle:thin:@h:1521:Secret1": "no JDBC dialect for 'jdbc:oracle:'; supported: mysql, postgresql",
		"postgresql://h/db":                "must start with 'jdbc:<database>://'",
	} {
		err := sink(url, nil)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "Secret1") {
			t.Errorf("%s: got %v, want %q", url, err, want)
		}
	}
}
