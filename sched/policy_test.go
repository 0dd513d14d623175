package sched_test

import (
	"testing"

	"github.com/tpipe/tpipe/sched"
)

// TestPolicyCapabilities checks that the runner can ask the table what a
// policy does: only a persistent policy has a folder, and giving the
// folder chooses it.
func TestPolicyCapabilities(t *testing.T) {
	for _, p := range sched.Policies() {
		if p.Persistent() != (p.FolderSetting() != "") {
			t.Errorf("%s: persistent %v but folder setting %q", p, p.Persistent(), p.FolderSetting())
		}
		if s := p.FolderSetting(); s != "" {
			if q, ok := sched.FolderPolicy(s); !ok || q != p {
				t.Errorf("FolderPolicy(%q) = %s, %v; want %s", s, q, ok, p)
			}
		}
	}
	if p, ok := sched.FolderPolicy("spool"); !ok || !p.Persistent() || p.String() != "spool" {
		t.Errorf(`FolderPolicy("spool") = %s, %v`, p, ok)
	}
	if _, ok := sched.FolderPolicy(""); ok {
		t.Error(`FolderPolicy("") found a policy`)
	}
}
