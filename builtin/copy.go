package builtin

import "github.com/tpipe/tpipe/task"

// copy and prefix are the paper's COPY and PREFIX ("Thrifty Execution of
// Task Pipelines"): the simplest filter, and the task that writes one
// record before it has read any, which makes Theorem 3.2's buffer bound
// tight.

func init() {
	register(&Spec{
		Name:  "copy",
		Usage: "copy",
		Help:  "Copy the input to the output unchanged: the paper's COPY.",
		New: func(env *Env, args []string) (*Cmd, error) {
			if _, err := (getopt{cmd: "copy"}).parse(args, nil); err != nil {
				return nil, err
			}
			if len(args) > 0 {
				return nil, usagef("copy", "extra operand '%s'", args[0])
			}
			r := task.Copy()
			return &Cmd{ReadsInput: true, Rec: &r}, nil
		},
	})
	register(&Spec{
		Name:  "prefix",
		Usage: "prefix [--] TEXT",
		Help: "Write TEXT as the first line, then copy the input: the paper's PREFIX. TEXT " +
			"may begin with -; a TEXT that is --help needs -- before it.",
		New: func(env *Env, args []string) (*Cmd, error) {
			// TEXT is any text, a leading '-' included: only --help
			// alone is an option, and "--" before TEXT keeps even that
			// as text.
			switch {
			case len(args) == 1 && args[0] == "--help":
				return nil, errHelp
			case len(args) == 2 && args[0] == "--":
				args = args[1:]
			}
			switch {
			case len(args) == 0:
				return nil, usagef("prefix", "missing operand")
			case len(args) > 1:
				return nil, usagef("prefix", "extra operand '%s'", args[1])
			}
			r := task.Prefix([]byte(args[0] + "\n"))
			return &Cmd{ReadsInput: true, Rec: &r}, nil
		},
	})
}
