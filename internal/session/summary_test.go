package session

import (
	"reflect"
	"testing"
	"time"

	"github.com/moat-sandbox/moat"
	"github.com/moat-sandbox/moat/policy"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       policy.Result
		workDir string
		want    Summary
	}{
		{"defaults", policy.Result{}, "", Summary{
			Network: "none", Domains: []string{}, Writable: []string{freshWorkDir}, Readable: []string{}, Isolation: "strict",
			Limits: map[string]string{"memory": "half the host's memory", "processes": "1024", "disk": "half the free disk space", "file_size": "4 GiB", "cpu_time": "none", "timeout": "none", "open_files": "1024"},
		}},
		{"everything", narrowPolicy(), "/w", Summary{
			Network: "allow-list", Domains: []string{"example.com", "*.pypi.org", "api.x.com:443"},
			Writable: []string{"/w", "/var/tmp/data"}, Readable: []string{"/usr/share"}, Build: true, Isolation: "default",
			Limits: map[string]string{"memory": "1 GiB", "processes": "100", "disk": "half the free disk space", "file_size": "none", "cpu_time": "none", "timeout": (10 * time.Second).String(), "open_files": "1024"},
		}},
		{"all network", policy.Result{Network: policy.Network{Mode: policy.NetworkAllowAll}, Config: moat.Config{Limits: moat.Limits{CPUSeconds: 5}}}, "", Summary{
			Network: "all", Domains: []string{}, Writable: []string{freshWorkDir}, Readable: []string{}, Isolation: "strict",
			Limits: map[string]string{"memory": "half the host's memory", "processes": "1024", "disk": "half the free disk space", "file_size": "4 GiB", "cpu_time": "5 s", "timeout": "none", "open_files": "1024"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := summarize(tc.r, tc.workDir); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
