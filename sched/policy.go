package sched

import (
	"context"
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/graph"
)

// Policy is a scheduling policy. The zero Policy is Auto. Everything that
// differs from one policy to another is a row of one table (policies, in
// this file): its name, what it promises, the buffers it needs and how it
// runs. Flags, help text, --explain and the benchmark iterate over the
// table, so a new policy is one more row.
type Policy uint8

// The policies. Every one gives the output of the serial schedule on the
// same graph and input (Theorem 2.2 of "Thrifty Execution of Task
// Pipelines").
const (
	Auto Policy = iota
	Concurrent
	ROS
	Fused
	Serial
	Spool
	numPolicies
)

// DefaultPolicy is the policy of the zero Options.
const DefaultPolicy = Auto

// policyRow is what a policy is.
type policyRow struct {
	name    string
	summary string // one line: what runs
	buffers string // the B it needs, in words
	graphs  bool   // runs graphs that are not chains
	finite  bool   // needs finite input
	// cap is the default capacity of a queue (0: graph.DefaultCap).
	cap int
	// capAuto is set when queue capacities may be sized at run time
	// (Options.CapAuto).
	capAuto bool
	// anyB is set when every stall of a graph can be resolved at any B,
	// only slowly below the bound.
	anyB bool
	// fuses is set when per-record stages are jammed into one loop.
	fuses bool
	// persistent is set when every edge is kept on disk, in a folder that
	// outlives the run, and a task's stderr is kept with its outputs.
	persistent bool
	// folder names the setting (the flag) that gives the folder a
	// persistent policy keeps its edges in.
	folder string
	// choose, for a policy that picks another at run time, returns the
	// one it runs on n CPUs and why.
	choose func(n int) (Policy, string)
	// plan adjusts the plan for this policy: its bound and what it
	// promises.
	plan func(g *graph.Graph, pl *Plan)
	run  func(ctx context.Context, g *graph.Graph, pl Plan, o Options) (*Stats, error)
}

// policies is the table. Each row's text appears in --help and
// --explain.
var policies = [numPolicies]policyRow{
	Auto: {
		name:    "auto",
		summary: "fuse per-record stages on one CPU, else run every task concurrently",
		buffers: "those of the policy it runs",
		graphs:  true,
		choose:  chooseAuto,
	},
	Concurrent: {
		name:    "concurrent",
		summary: "one goroutine per task, B shared buffers",
		buffers: "B = the sum of queue capacities (Theorem 3.2)",
		graphs:  true,
		capAuto: true,
		run:     runConcurrent,
	},
	ROS: {
		name:    "ros",
		summary: "Record Oriented Scheduling: one task at a time, the runnable one with the greatest index; one buffer suffices (Theorem 4.1)",
		buffers: "1 (Theorem 4.1), plus the queue room of tasks that wait outside tpipe",
		graphs:  true,
		cap:     1, // Theorem 4.1's capacities
		anyB:    true,
		plan:    planROS,
		run:     runROS,
	},
	Fused: {
		name:    "fused",
		summary: "maximal runs of per-record stages compiled into one loop (loop jamming), the rest concurrent",
		buffers: "the fused graph's bound",
		graphs:  true,
		capAuto: true,
		fuses:   true,
		run:     runFused,
	},
	Serial: {
		name:    "serial",
		summary: "each task to completion in turn, every queue a compressed temp file (the paper's baseline)",
		buffers: "those of the task running",
		graphs:  true,
		finite:  true,
		run:     runSerial,
	},
	Spool: {
		name:       "spool",
		summary:    "every edge a directory of segment files (--spool DIR): a killed run resumes, a rerun redoes only what changed",
		buffers:    "disk; in memory those of the steps running",
		graphs:     true,
		finite:     true,
		persistent: true,
		folder:     "spool",
		run:        runSpool,
	},
}

func (p Policy) row() *policyRow {
	if p >= numPolicies {
		return &policyRow{name: fmt.Sprintf("Policy(%d)", p)}
	}
	return &policies[p]
}

// Policies returns every policy, in the table's order (Auto first).
func Policies() []Policy {
	ps := make([]Policy, numPolicies)
	for i := range ps {
		ps[i] = Policy(i)
	}
	return ps
}

// PolicyNames returns the names of the policies, in the table's order.
func PolicyNames() []string {
	names := make([]string, numPolicies)
	for i := range names {
		names[i] = policies[i].name
	}
	return names
}

// ParsePolicy returns the policy named name.
func ParsePolicy(name string) (Policy, error) {
	for i := range policies {
		if policies[i].name == name {
			return Policy(i), nil
		}
	}
	return 0, &UnknownPolicyError{Name: name}
}

// UnknownPolicyError is the error of ParsePolicy.
type UnknownPolicyError struct{ Name string }

func (e *UnknownPolicyError) Error() string {
	return fmt.Sprintf("unknown policy %q (known: %s)", e.Name, strings.Join(PolicyNames(), ", "))
}

// String returns the policy's name.
func (p Policy) String() string { return p.row().name }

// MarshalText makes a Policy its name in JSON.
func (p Policy) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses a policy's name.
func (p *Policy) UnmarshalText(b []byte) error {
	q, err := ParsePolicy(string(b))
	if err == nil {
		*p = q
	}
	return err
}

// Summary says in one line what runs under p.
func (p Policy) Summary() string { return p.row().summary }

// Buffers says in words the B that p needs.
func (p Policy) Buffers() string { return p.row().buffers }

// Graphs reports whether p runs graphs that are not chains (tee, merge,
// join).
func (p Policy) Graphs() bool { return p.row().graphs }

// Finite reports whether p needs finite input (it keeps whole edges).
func (p Policy) Finite() bool { return p.row().finite }

// Fuses reports whether p compiles runs of per-record stages into one
// loop (see Fuse).
func (p Policy) Fuses() bool { return p.row().fuses }

// Persistent reports whether p keeps every edge on disk, in a folder
// that outlives the run (a killed run resumes, a rerun redoes only what
// changed), and keeps what a task writes to stderr with its outputs to
// write it again when a rerun finds them (graph.Task.Stderr). --explain
// and --dot say where each edge is kept (Plan.Kept).
func (p Policy) Persistent() bool { return p.row().persistent }

// FolderSetting is the name of the setting (the flag) that gives the
// folder a persistent policy keeps its edges in; "" when p keeps none.
func (p Policy) FolderSetting() string { return p.row().folder }

// FolderPolicy returns the policy whose folder the setting named setting
// gives (see FolderSetting), and false when no policy's does: giving the
// folder chooses the policy.
func FolderPolicy(setting string) (Policy, bool) {
	for i := range policies {
		if setting != "" && policies[i].folder == setting {
			return Policy(i), true
		}
	}
	return 0, false
}

// Chooses reports whether p picks another policy when a run is planned
// (Plan.Runs says which).
func (p Policy) Chooses() bool { return p.row().choose != nil }

// DefaultCap is the capacity of a queue under p when none is asked for.
func (p Policy) DefaultCap() int {
	if c := p.row().cap; c > 0 {
		return c
	}
	return graph.DefaultCap
}
