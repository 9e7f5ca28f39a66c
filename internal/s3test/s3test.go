// Package s3test runs an in-process S3 server for tests: gofakes3 with
// its in-memory backend, on httptest. It is imported by tests only.
package s3test

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is an S3 server with one bucket.
type Server struct {
	URL     string // the server's HTTP address
	Bucket  string
	Backend *s3mem.Backend
}

// Start starts a server with the bucket, stopped when the test ends, and
// points the AWS SDK's credentials at made-up keys through the
// environment (so the test must not be parallel). Processes the test
// starts inherit them.
func Start(tb testing.TB, bucket string) *Server {
	tb.Helper()
	be := s3mem.New()
	if err := be.CreateBucket(bucket); err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewServer(gofakes3.New(be).Server())
	tb.Cleanup(ts.Close)
	tb.Setenv("AWS_ACCESS_KEY_ID", "test-access-key")
	tb.Setenv("AWS_SECRET_ACCESS_KEY", "test-secret-key")
	tb.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return &Server{URL: ts.URL, Bucket: bucket, Backend: be}
}

// Location is the store URL of a folder of the bucket, in the form
// state.checkpoints.dir takes.
func (s *Server) Location(prefix string) string {
	q := url.Values{}
	q.Set("region", "us-east-1")
	q.Set("endpoint", s.URL)
	q.Set("use_path_style", "true")
	return "s3://" + s.Bucket + "/" + prefix + "?" + q.Encode()
}

// Keys lists the bucket's object keys under prefix.
func (s *Server) Keys(tb testing.TB, prefix string) []string {
	tb.Helper()
	res, err := s.Backend.ListBucket(s.Bucket, &gofakes3.Prefix{Prefix: prefix, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		tb.Fatal(err)
	}
	var keys []string
	for _, c := range res.Contents {
		keys = append(keys, c.Key)
	}
	return keys
}
