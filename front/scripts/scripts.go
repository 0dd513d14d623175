// Package scripts writes pmjq's three shell scripts for a pipeline
// ("How to scale a one liner pipeline", section 5.1): setup.sh makes the
// folders, users and groups, launch.sh starts one worker per stage, and
// cleanup.sh undoes setup.sh. They are plain POSIX sh, meant to be read,
// edited (mounts, --max-load hooks) and kept under version control.
//
// # The permission model
//
// As the paper proposes, each stage runs as its own user (pu_TAG_NAME) in
// its own group (pg_TAG_NAME); that user and group own the stage's input
// folder, mode 2770 (set-group-ID, no access for others), and the user of
// each stage that writes into it is a member of the group. A stage can
// thus read and remove only its own input, and write only into the
// folders it feeds. Package place gives tokens in a set-group-ID folder
// mode 0640 and the folder's group, so the reading stage can read what
// its writers wrote. The protocol's folders (.tmp for writers; .claim
// and .lock for the readers only) are made by setup.sh with the same
// owners. The last place, out, belongs to root and a group of its own
// (pg_TAG_out) that the last stage and the results' readers join.
package scripts

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tpipe/tpipe/shell"
)

// Stage is one stage of the pipeline: one worker, one user and group.
type Stage struct {
	Name   string // unique, used in user, group and place names
	Filter string // the stage's command, as tpipe's language
	In     string // input place, relative to the pipeline's folder
	Out    string // output place
	User   string
	Group  string
}

// Pipeline is a pipeline laid out as places and stages.
type Pipeline struct {
	Dir    string // absolute
	Text   string // the pipeline as given
	Tag    string
	Stages []Stage
	// OutGroup owns the last place with root.
	OutGroup string
}

var unsafe = regexp.MustCompile(`[^a-z0-9_]+`)

// name makes s fit in a user or group name: lower case letters, digits
// and '_', at most n bytes.
func name(s string, n int) string {
	s = strings.Trim(unsafe.ReplaceAllString(strings.ToLower(s), "_"), "_")
	if s == "" {
		s = "x"
	}
	if len(s) > n {
		s = s[:n]
	}
	return s
}

// Plan lays out text, a linear pipeline of tpipe's language (a | b | c),
// in dir: one stage per command, the places in, 1_a, 2_b, out between
// them. Redirections and named edges are refused: the places are the
// pipeline's edges.
func Plan(dir, text string) (*Pipeline, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s, err := shell.Parse(text, shell.Options{})
	if err != nil {
		return nil, err
	}
	if len(s.Pipelines) != 1 {
		return nil, fmt.Errorf("want one pipeline (a | b | c), got %d", len(s.Pipelines))
	}
	tag := name(filepath.Base(abs), 8)
	p := &Pipeline{Dir: abs, Text: text, Tag: tag, OutGroup: "pg_" + tag + "_out"}
	cmds := s.Pipelines[0].Cmds
	for i, c := range cmds {
		if len(c.Redirs) > 0 {
			return nil, fmt.Errorf("%s: %s: a stage reads its input place and writes its output place; drop the redirection", c.Redirs[0].Pos, c.Redirs[0].Op)
		}
		words := make([]string, len(c.Args))
		for j, w := range c.Args {
			if w.Edge {
				return nil, fmt.Errorf("%s: %s: named edges are not laid out as places yet; write the stages as one linear pipeline", w.Pos, w.Value)
			}
			words[j] = Quote(w.Value)
		}
		st := Stage{
			Name:   fmt.Sprintf("%d_%s", i+1, name(filepath.Base(c.Args[0].Value), 12)),
			Filter: strings.Join(words, " "),
		}
		st.User = "pu_" + tag + "_" + st.Name
		st.Group = "pg_" + tag + "_" + st.Name
		st.In = "in"
		if i > 0 {
			st.In = p.Stages[i-1].Name
		}
		st.Out = st.Name
		if i == len(cmds)-1 {
			st.Out = "out"
		}
		p.Stages = append(p.Stages, st)
	}
	return p, nil
}

// Quote quotes s for a POSIX shell (and for tpipe's language, which
// reads quotes the same way): bare when it needs no quotes, else in
// single quotes.
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,%@", r))
	}) < 0 {
		return s
	}
	if !strings.Contains(s, "'") {
		return "'" + s + "'"
	}
	// Double quotes read better than a chain of '\'' and are as safe
	// once \ " $ and ` are escaped.
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

// header opens every script.
func (p *Pipeline) header(b *strings.Builder, what string) {
	fmt.Fprintf(b, "#!/bin/sh\n# %s\n# Written by tpipe scripts for the pipeline\n", what)
	for _, line := range strings.Split(p.Text, "\n") {
		fmt.Fprintf(b, "#   %s\n", line)
	}
	fmt.Fprintf(b, "set -eu\nDIR=%s\n", Quote(p.Dir))
}

// Setup is setup.sh: run as root, it makes the groups, the users and the
// folders with their owners and modes. Running it again changes nothing.
func (p *Pipeline) Setup() string {
	var b strings.Builder
	p.header(&b, "setup.sh: the folders, users and groups of the pipeline (run as root).")
	b.WriteString(`
group() { getent group "$1" >/dev/null || groupadd --system "$1"; }
user() { getent passwd "$1" >/dev/null || useradd --system --no-create-home --home-dir / --shell /usr/sbin/nologin --gid "$2" "$1"; }
# place DIR OWNER GROUP: a place the group may write into and OWNER reads.
place() {
	mkdir -p "$1" "$1/.tmp" "$1/.claim" "$1/.lock"
	chown "$2:$3" "$1" "$1/.tmp" "$1/.claim" "$1/.lock"
	chmod 2770 "$1" "$1/.tmp"
	chmod 0700 "$1/.claim" "$1/.lock"
}

`)
	fmt.Fprintf(&b, "group %s\n", p.OutGroup)
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "group %s\n", s.Group)
	}
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "user %s %s\n", s.User, s.Group)
	}
	b.WriteString("# Each stage's user joins the group of the place it writes into.\n")
	for i, s := range p.Stages {
		next := p.OutGroup
		if i+1 < len(p.Stages) {
			next = p.Stages[i+1].Group
		}
		fmt.Fprintf(&b, "usermod -a -G %s %s\n", next, s.User)
	}
	b.WriteString("\nmkdir -p \"$DIR\"\nchmod 0755 \"$DIR\"\n")
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "place \"$DIR/%s\" %s %s\n", s.In, s.User, s.Group)
	}
	fmt.Fprintf(&b, "place \"$DIR/out\" root %s\n", p.OutGroup)
	fmt.Fprintf(&b, "mkdir -p \"$DIR/.log\"\nchmod 0700 \"$DIR/.log\"\n")
	fmt.Fprintf(&b, "\n# Who submits jobs joins %s; who reads results joins %s:\n#   usermod -a -G %s USER\n", p.Stages[0].Group, p.OutGroup, p.Stages[0].Group)
	return b.String()
}

// Launch is launch.sh: run as root, it starts one worker per stage, each
// as its stage's user, its messages in DIR/.log/STAGE.log, and waits for
// them. TPIPE names the tpipe binary (default: tpipe on PATH).
func (p *Pipeline) Launch() string {
	var b strings.Builder
	p.header(&b, "launch.sh: one worker per stage, each as its own user (run as root).")
	b.WriteString(`TPIPE=${TPIPE:-tpipe}

# worker LOG USER ARGS...: run tpipe as USER, its messages appended to
# LOG, which root opens (the stage's user cannot write in .log).
worker() {
	log=$1 user=$2
	shift 2
	(exec >>"$log" 2>&1 && exec sudo -u "$user" -- "$TPIPE" "$@") &
}

`)
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "worker \"$DIR/.log/%s.log\" %s pmjq \"$DIR/%s\" %s \"$DIR/%s\"\n",
			s.Name, s.User, s.In, Quote(s.Filter), s.Out)
	}
	b.WriteString("wait\n")
	return b.String()
}

// Cleanup is cleanup.sh: run as root, it stops the workers and removes
// the users, the groups and the folders, with the jobs still in them.
func (p *Pipeline) Cleanup() string {
	var b strings.Builder
	p.header(&b, "cleanup.sh: stop the workers, remove the users, groups and folders (run as root).\n# The jobs still in the folders are removed too.")
	b.WriteString("\n")
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "pkill -u %s || true\n", s.User)
	}
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "userdel %s 2>/dev/null || true\n", s.User)
	}
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "groupdel %s 2>/dev/null || true\n", s.Group)
	}
	fmt.Fprintf(&b, "groupdel %s 2>/dev/null || true\n", p.OutGroup)
	for _, s := range p.Stages {
		fmt.Fprintf(&b, "rm -rf -- \"$DIR/%s\"\n", s.In)
	}
	b.WriteString("rm -rf -- \"$DIR/out\" \"$DIR/.log\"\nrmdir -- \"$DIR\" 2>/dev/null || true\n")
	return b.String()
}

// Files returns the three scripts by name.
func (p *Pipeline) Files() map[string]string {
	return map[string]string{"setup.sh": p.Setup(), "launch.sh": p.Launch(), "cleanup.sh": p.Cleanup()}
}
