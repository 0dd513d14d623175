package corpus

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// The inputs are made here, from a seed, so every run and every machine
// sees the same bytes: an access log in the common log format and a text
// of words. Their shapes are what the pipelines care about: a few hundred
// hot client addresses and paths among many rare ones (Zipf), a dozen
// status codes dominated by 200, response sizes over five orders of
// magnitude, words with a Zipf law over a vocabulary of 50,000.

// zipf draws ranks 0..n-1 with probability falling as 1/(rank+1)^s.
type zipf struct{ z *rand.Zipf }

func newZipf(r *rand.Rand, s float64, n uint64) zipf {
	return zipf{rand.NewZipf(r, s, 1, n-1)}
}

func (z zipf) next() int { return int(z.z.Uint64()) }

var (
	logMethods  = []string{"GET", "GET", "GET", "GET", "GET", "GET", "POST", "POST", "HEAD", "PUT", "DELETE"}
	logStatuses = []string{"200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200", "200",
		"304", "304", "301", "302", "404", "404", "403", "500", "502", "503"}
	logSections = []string{"", "static", "api/v1", "api/v2", "blog", "images", "docs", "user", "cart", "search"}
	logExts     = []string{".html", ".css", ".js", ".png", ".jpg", "", "", ".json", ".svg", ".ico"}
	logMonths   = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
)

// AppendLogLine appends line i of the access log made from r (without its
// newline): "ADDR - - [DD/Mon/YYYY:HH:MM:SS +0000] "METHOD PATH
// HTTP/1.1" STATUS BYTES", about 70 bytes.
func appendLogLine(b []byte, i int, r *rand.Rand, hosts, paths zipf) []byte {
	h := hosts.next()
	// Addresses of hot clients come from a small range; rank spreads them.
	x := uint32(h)*2654435761 + 0x0a000001
	b = strconv.AppendUint(b, uint64(x>>24&0xff|0x0a), 10)
	for _, s := range []uint32{16, 8, 0} {
		b = append(b, '.')
		b = strconv.AppendUint(b, uint64(x>>s&0xff), 10)
	}
	sec := 1_700_000_000 + i/12 // a dozen requests a second
	day := sec / 86400
	b = fmt.Appendf(b, " - - [%02d/%s/2023:%02d:%02d:%02d +0000] \"", 1+day%28, logMonths[(day/28)%12],
		sec/3600%24, sec/60%60, sec%60)
	b = append(b, logMethods[r.IntN(len(logMethods))]...)
	b = append(b, ' ', '/')
	p := paths.next()
	if s := logSections[p%len(logSections)]; s != "" {
		b = append(b, s...)
		b = append(b, '/')
	}
	b = append(b, "page"...)
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, logExts[p/len(logSections)%len(logExts)]...)
	b = append(b, " HTTP/1.1\" "...)
	st := logStatuses[r.IntN(len(logStatuses))]
	b = append(b, st...)
	b = append(b, ' ')
	size := 0
	if st[0] == '2' {
		// Log-uniform from 100 B to 10 MB.
		size = int(math.Exp(math.Log(100) + r.Float64()*math.Log(1e5)))
	} else if st[0] != '3' {
		size = 100 + r.IntN(400)
	}
	return strconv.AppendInt(b, int64(size), 10)
}

// wordList is the vocabulary: pronounceable words of 2 to 10 letters,
// distinct, made from syllables.
func wordList(n int, r *rand.Rand) []string {
	cons, vows := "bcdfghjklmnprstvwz", "aeiou"
	seen := make(map[string]bool, n)
	words := make([]string, 0, n)
	for len(words) < n {
		var b []byte
		for range 1 + r.IntN(4) {
			b = append(b, cons[r.IntN(len(cons))], vows[r.IntN(len(vows))])
			if r.IntN(3) == 0 {
				b = append(b, cons[r.IntN(len(cons))])
			}
		}
		if w := string(b); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// Inputs are the files the pipelines read, in one directory.
type Inputs struct {
	Dir   string
	Log   string // access.log
	Words string // words.txt: text, 5 to 15 words a line
	Dict  string // dict.txt: the vocabulary, one word a line, unsorted
}

// Generate writes the inputs into dir (made if missing): logLines lines of
// access log, textLines lines of text. The same arguments give the same
// bytes; files already there with the right size are kept.
func Generate(dir string, logLines, textLines int) (Inputs, error) {
	in := Inputs{Dir: dir, Log: filepath.Join(dir, "access.log"),
		Words: filepath.Join(dir, "words.txt"), Dict: filepath.Join(dir, "dict.txt")}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return in, err
	}
	r := rand.New(rand.NewPCG(19, uint64(logLines)))
	hosts, paths := newZipf(r, 1.1, 200_000), newZipf(r, 1.05, 50_000)
	err := writeLines(in.Log, logLines, func(b []byte, i int) []byte {
		return appendLogLine(b, i, r, hosts, paths)
	})
	if err != nil {
		return in, err
	}
	r = rand.New(rand.NewPCG(19, uint64(textLines)))
	vocab := wordList(50_000, r)
	words := newZipf(r, 1.07, uint64(len(vocab)))
	err = writeLines(in.Words, textLines, func(b []byte, _ int) []byte {
		for j := range 5 + r.IntN(11) {
			if j > 0 {
				b = append(b, ' ')
			}
			w := vocab[words.next()]
			if r.IntN(12) == 0 { // capitals at some sentence starts
				b = append(b, w[0]-'a'+'A')
				w = w[1:]
			}
			b = append(b, w...)
		}
		return b
	})
	if err != nil {
		return in, err
	}
	err = writeLines(in.Dict, len(vocab), func(b []byte, i int) []byte { return append(b, vocab[i]...) })
	return in, err
}

// writeLines writes n lines made by line to name, through a temporary
// name, so a file of the final name is always whole.
func writeLines(name string, n int, line func(b []byte, i int) []byte) error {
	f, err := os.Create(name + ".tmp")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var b []byte
	for i := range n {
		b = append(line(b[:0], i), '\n')
		w.Write(b)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(name+".tmp", name)
}
