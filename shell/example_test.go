package shell_test

import (
	"fmt"

	"github.com/tpipe/tpipe/shell"
)

func ExampleParse() {
	src := `cat app.log | grep -i error | cut -d" " -f3 | sort | uniq -c >counts`
	s, err := shell.Parse(src, shell.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range s.Pipelines[0].Cmds {
		var args []string
		for _, w := range c.Args {
			args = append(args, w.Value)
		}
		fmt.Printf("%s %q", c.Pos, args)
		for _, r := range c.Redirs {
			fmt.Printf(" %s %s", r.Op, r.Target.Value)
		}
		fmt.Println()
	}
	// Output:
	// 1:1 ["cat" "app.log"]
	// 1:15 ["grep" "-i" "error"]
	// 1:31 ["cut" "-d " "-f3"]
	// 1:47 ["sort"]
	// 1:54 ["uniq" "-c"] > counts
}

func ExampleParse_getenv() {
	env := map[string]string{"LOG": "/var/log/app.log", "PAT": "disk full"}
	s, _ := shell.Parse(`grep "$PAT" $LOG '$PAT'`, shell.Options{
		Getenv: func(name string) string { return env[name] },
	})
	for _, w := range s.Pipelines[0].Cmds[0].Args {
		fmt.Printf("%q quoted=%v\n", w.Value, w.Quoted)
	}
	// Output:
	// "grep" quoted=false
	// "disk full" quoted=true
	// "/var/log/app.log" quoted=false
	// "$PAT" quoted=true
}

// An interactive caller reads more lines while the error is Incomplete,
// and shows any other error with a caret under its position.
func ExampleParseError() {
	lines := []string{"cat app.log |", "  grep 'disk", "full' \\", "  | wc -l", "cat x | | wc"}
	src := ""
	for _, line := range lines {
		src += line + "\n"
		s, err := shell.Parse(src, shell.Options{})
		if perr, ok := err.(*shell.ParseError); ok {
			if perr.Incomplete {
				fmt.Println("more:", perr)
				continue
			}
			fmt.Println(perr)
			fmt.Println(perr.Caret(src))
			break
		}
		fmt.Println("run:", len(s.Pipelines[0].Cmds), "commands")
		src = ""
	}
	// Output:
	// more: 1:13: missing command after `|`
	// more: 2:8: unterminated single quote
	// more: 3:7: line continuation at end of input
	// run: 3 commands
	// 1:9: missing command after `|`
	// cat x | | wc
	//         ^
}
