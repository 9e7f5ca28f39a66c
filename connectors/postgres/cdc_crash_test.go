package postgres_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/streamsql/streamsql/connectors/mysql/mysqltest"
	"github.com/streamsql/streamsql/connectors/postgres/pgtest"
	"github.com/streamsql/streamsql/engine"
)

// The demo pipeline (MariaDB -> mysql-cdc -> GROUP BY -> PostgreSQL,
// exactly once) runs in a child process that is SIGKILLed 20 times at
// random moments while a writer keeps inserting, updating and deleting
// orders; each new child restores the last checkpoint. In the end the
// PostgreSQL table must equal MariaDB's own GROUP BY over its final
// table, customer by customer, with nothing left prepared.
func TestCDCToPostgresSurvivesKills(t *testing.T) {
	if os.Getenv("STREAMSQL_CDC_KILL_CHILD") == "1" {
		port, _ := strconv.Atoi(os.Getenv("KILL_PORT"))
		j := run(t, engine.NewSession(&bytes.Buffer{}), fmt.Sprintf(cdcJob, os.Getenv("KILL_JOB"), os.Getenv("KILL_DIR"), port,
			os.Getenv("KILL_ORDERS"), os.Getenv("KILL_URL"), os.Getenv("KILL_TOTALS")))
		t.Fatalf("the job ended: %v", j.Wait())
	}
	my := mysqltest.SharedBinlog(t)
	mdb, err := sql.Open("mysql", my.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	orders := fmt.Sprintf("kill_orders_%d", os.Getpid())
	if _, err := mdb.Exec("CREATE TABLE " + orders + " (id BIGINT PRIMARY KEY, customer VARCHAR(20) NOT NULL, amount DECIMAL(10,2) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	defer mdb.Exec("DROP TABLE " + orders)
	pg := pgtest.Shared(t)
	totals := fmt.Sprintf("kill_totals_%d", os.Getpid())
	pc := pg.Conn(t)
	pg.Exec(t, pc, "CREATE TABLE "+totals+" (customer TEXT PRIMARY KEY, n BIGINT NOT NULL, total NUMERIC(38,2) NOT NULL)")
	t.Cleanup(func() { pg.Exec(t, pg.Conn(t), "DROP TABLE IF EXISTS "+totals) })
	job := fmt.Sprintf("cdckill_%d", os.Getpid())
	rollbackPrepared(t, pg, job)
	dir := t.TempDir()
	child := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCDCToPostgresSurvivesKills$", "-test.count=1")
		cmd.Env = append(os.Environ(), "STREAMSQL_CDC_KILL_CHILD=1", "KILL_JOB="+job, "KILL_DIR="+dir,
			"KILL_PORT="+strconv.Itoa(my.Port), "KILL_ORDERS="+orders, "KILL_URL="+pg.JDBC(), "KILL_TOTALS="+totals)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	stop := make(chan struct{})
	wdone := make(chan struct{})
	go func() { // the writer
		defer close(wdone)
		rnd := rand.New(rand.NewSource(11))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			id := rnd.Intn(500) + 1
			var q string
			switch rnd.Intn(3) {
			case 0:
				q = fmt.Sprintf("INSERT INTO %s VALUES (%d, 'c%d', %d.25) ON DUPLICATE KEY UPDATE amount = amount + 1", orders, id, rnd.Intn(12), i%1000)
			case 1:
				q = fmt.Sprintf("UPDATE %s SET customer = 'c%d' WHERE id = %d", orders, rnd.Intn(12), id)
			default:
				q = fmt.Sprintf("DELETE FROM %s WHERE id = %d", orders, id)
			}
			if _, err := mdb.Exec(q); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	rnd := rand.New(rand.NewSource(3))
	const kills = 20
	for k := 0; k < kills; k++ {
		cmd := child()
		time.Sleep(time.Duration(800+rnd.Intn(1200)) * time.Millisecond)
		_ = cmd.Process.Kill() // SIGKILL
		_ = cmd.Wait()
	}
	close(stop)
	<-wdone
	cmd := child()
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	want := map[string]string{}
	for _, r := range rowsOf(t, mdb, "SELECT customer, COUNT(*), SUM(amount) FROM "+orders+" GROUP BY customer") {
		c, rest, _ := strings.Cut(r, "|")
		want[c] = rest
	}
	var lost, duplicated, mismatched int
	deadline := time.Now().Add(90 * time.Second)
	for {
		got := map[string]string{}
		for _, r := range pgtest.Rows(t, pc, "SELECT customer, n, total FROM "+totals) {
			c, rest, _ := strings.Cut(r, "|")
			got[c] = rest
		}
		lost, duplicated, mismatched = 0, 0, 0
		for c, w := range want {
			g, ok := got[c]
			switch {
			case !ok:
				lost++
			case g == w:
			default:
				gn, _ := strconv.Atoi(strings.Split(g, "|")[0])
				wn, _ := strconv.Atoi(strings.Split(w, "|")[0])
				if gn > wn {
					duplicated++
				} else if gn < wn {
					lost++
				} else {
					mismatched++
				}
			}
		}
		for c := range got {
			if _, ok := want[c]; !ok {
				mismatched++
			}
		}
		if lost+duplicated+mismatched == 0 && len(prepared(t, pg, job)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("kills=%d lost=%d duplicated=%d mismatched=%d prepared=%v", kills, lost, duplicated, mismatched, prepared(t, pg, job))
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Logf("kills=%d lost=%d duplicated=%d mismatched=%d", kills, lost, duplicated, mismatched)
	fmt.Printf("kills=%d lost=%d duplicated=%d mismatched=%d\n", kills, lost, duplicated, mismatched)
}
