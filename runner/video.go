package runner

import (
	"fmt"
	"strings"

	"github.com/tpipe/tpipe/sched"
)

// A command that reads video (decode) needs records of at least one frame,
// which only the stream's header says. The builder asks the command
// before the run (builtin.Cmd.NeedSize): of its FILE operand it reads the
// header itself; a '<' file or stdin the builder reads for it, keeps what
// it read, and hands the command the stream with those bytes put back in
// front (builtin.Env.Input), so nothing is lost. The plan's S is then at
// least that size.

// sizeNeed is the largest record size the commands of a graph need.
type sizeNeed struct {
	need int
	why  string // "one 1280x720 4:2:0 frame (from in.y4m's header)"
}

func (n *sizeNeed) add(need int, why string) {
	if need > n.need {
		n.need, n.why = need, why
	}
}

// RecordSizeError is a record size, set by hand, too small for the frames
// of a video the graph decodes.
type RecordSizeError struct {
	Size, Need int
	Why        string
}

func (e *RecordSizeError) Error() string {
	return fmt.Sprintf("record size %s is too small: %s needs %s", human(int64(e.Size)), e.Why, human(int64(e.Need)))
}

// recordSize returns the S to plan with, and a line for --explain when the
// graph's video decided it.
func (r *Runner) recordSize(n sizeNeed) (int, string, error) {
	set := r.cfg.RecordSize
	if n.need == 0 {
		return set, "", nil
	}
	if set != 0 {
		if set < n.need {
			return 0, "", &RecordSizeError{Size: set, Need: roundRecordSize(n.need), Why: n.why}
		}
		return set, "", nil
	}
	if n.need <= sched.DefaultRecordSize {
		return 0, "", nil
	}
	s := roundRecordSize(n.need)
	return s, fmt.Sprintf("record size %s = %s", human(int64(s)), n.why), nil
}

// roundRecordSize rounds n up to a quarter step of the power of two below
// it (1.25, 1.5, 1.75, 2 MiB): a size that reads well, at most 25% more.
func roundRecordSize(n int) int {
	p := 1
	for p*2 <= n {
		p *= 2
	}
	step := max(p/4, 1)
	return (n + step - 1) / step * step
}

// human writes n bytes in the largest binary unit it reaches, with up to
// two decimals: "1.5 MiB", "1.25 MiB", "256 KiB".
func human(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f, u := float64(n), 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	s := strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
	return s + " " + units[u]
}
