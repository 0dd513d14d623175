package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// readmeMaxLines is the length the README must stay under: a first
// contact, with the reference in docs/ and the figures in bench/README.md.
const readmeMaxLines = 400

// checked are the files whose links must resolve, relative to the
// repository root (this package's parent).
func checked(t *testing.T, root string) []string {
	files := []string{"README.md", "ARCHITECTURE.md", "bench/README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) == 0 {
		t.Fatal("no docs/*.md")
	}
	for _, f := range more {
		rel, _ := filepath.Rel(root, f)
		files = append(files, rel)
	}
	return files
}

func TestReadmeShort(t *testing.T) {
	text, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: move reference to docs/ and figures to bench/README.md", n, readmeMaxLines)
	}
	toc := contents(string(text))
	if len(toc) < 5 {
		t.Errorf("README.md: want a ## Contents section listing at least 5 of its sections, found %d links", len(toc))
	}
	for _, l := range toc {
		if !strings.HasPrefix(l, "#") {
			t.Errorf("README.md contents: %q is not a section of the README", l)
		}
	}
	for _, cmd := range []string{"go run ./cmd/tpipe '", "go test ./...", "go install ./cmd/tpipe", `export PATH="$PATH:$(go env GOPATH)/bin"`} {
		if !strings.Contains(string(text), cmd) {
			t.Errorf("README.md does not show %s", cmd)
		}
	}
}

func TestLinksResolve(t *testing.T) {
	root := ".."
	for _, f := range checked(t, root) {
		for _, p := range brokenLinks(root, f) {
			t.Errorf("%s", p)
		}
	}
}

// TestBrokenLinksFound checks the checker: on a made-up tree it must
// report a missing file, a missing heading in another file and in the
// same one, and pass the links that are right.
func TestBrokenLinksFound(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/b.md", "# B\n\n## The `spool`: persistence, again\n\n## Twice\n\n## Twice\n")
	write("a.md", strings.Join([]string{
		"# A", "",
		"[ok](docs/b.md) [ok](docs/b.md#the-spool-persistence-again) [ok](docs/b.md#twice-1)",
		"[ok](#a) [ok](https://example.com/x) [ok](docs/) [ok](docs/b.md 'title')",
		"[gone](docs/c.md) [no heading](docs/b.md#nothing) [no heading here](#nowhere)",
		"`[in code](nothing.md)`", "```", "[in a block](nothing.md)", "```",
		"[ref]: docs/missing.md",
	}, "\n"))
	got := brokenLinks(root, "a.md")
	want := []string{
		"a.md:5: docs/c.md: no such file",
		"a.md:5: docs/b.md#nothing: no such heading",
		"a.md:5: #nowhere: no such heading",
		"a.md:10: docs/missing.md: no such file",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("brokenLinks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var (
	inlineLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+["'][^)]*["'])?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// brokenLinks returns a line for each relative link of file (relative to
// root) that names no file, or a heading its target does not have.
func brokenLinks(root, file string) []string {
	text, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", file, err)}
	}
	var bad []string
	for i, line := range outsideCode(string(text)) {
		var targets []string
		for _, m := range inlineLink.FindAllStringSubmatch(line, -1) {
			targets = append(targets, m[1])
		}
		if m := refLink.FindStringSubmatch(line); m != nil {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if problem := resolve(root, file, target); problem != "" {
				bad = append(bad, fmt.Sprintf("%s:%d: %s: %s", file, i+1, target, problem))
			}
		}
	}
	return bad
}

// outsideCode returns the lines of text with fenced blocks and code spans
// blanked, so that a link shown as code is not taken for one.
func outsideCode(text string) []string {
	lines := outsideCodeKeepSpans(text)
	for i, l := range lines {
		lines[i] = codeSpan.ReplaceAllString(l, "")
	}
	return lines
}

// resolve says what is wrong with target, a link in file, or "" if
// nothing is: an address with a scheme is not checked.
func resolve(root, file, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, anchor, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
		if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
			return "no such file"
		}
	}
	if anchor == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	text, err := os.ReadFile(filepath.Join(root, dest))
	if err != nil {
		return err.Error()
	}
	for _, a := range anchors(string(text)) {
		if a == anchor {
			return ""
		}
	}
	return "no such heading"
}

// anchors returns the ids GitHub gives the headings of a Markdown text:
// lowercased, punctuation dropped, spaces made hyphens, and -1, -2... on
// repeats.
func anchors(text string) []string {
	seen := map[string]int{}
	var ids []string
	for _, l := range outsideCodeKeepSpans(text) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimLeft(l, "#")
		if h == "" || h[0] != ' ' {
			continue
		}
		id := slug(strings.TrimSpace(h))
		if n := seen[id]; n > 0 {
			ids = append(ids, fmt.Sprintf("%s-%d", id, n))
		} else {
			ids = append(ids, id)
		}
		seen[id]++
	}
	return ids
}

// outsideCodeKeepSpans is outsideCode for headings: fenced blocks go (a
// "# comment" in a shell example is no heading), code spans stay, since
// their text is part of the heading's id.
func outsideCodeKeepSpans(text string) []string {
	lines := strings.Split(text, "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
		} else if fenced {
			lines[i] = ""
		}
	}
	return lines
}

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// contents returns the link targets listed in README's "## Contents"
// section.
func contents(text string) []string {
	var links []string
	in := false
	for _, l := range outsideCode(text) {
		if strings.HasPrefix(l, "## ") {
			in = strings.TrimSpace(l[3:]) == "Contents"
			continue
		}
		if in {
			for _, m := range inlineLink.FindAllStringSubmatch(l, -1) {
				links = append(links, m[1])
			}
		}
	}
	return links
}
