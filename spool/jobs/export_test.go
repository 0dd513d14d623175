package jobs

// What the external tests (front_test.go) use of the internal ones.

var (
	Fast     = fast
	GroupKey = groupKey
	JobSet   = jobSet
)

type Recorder = recorder

func (r *recorder) Summary() string          { return r.summary() }
func (r *recorder) Get(kind string) []string { return r.get(kind) }
