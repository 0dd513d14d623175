package status

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tpipe/tpipe/internal/visible"
)

// WriteText writes the report as tables for a person.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "places in %s\n", visible.Controls(r.Dir))
	fmt.Fprintf(tw, "  PLACE\tTOKENS\tHELD\tWRITING\tASIDE\n")
	for _, p := range r.Places {
		if p.Err != nil {
			fmt.Fprintf(tw, "  %s\t%s\n", visible.Controls(p.Name), visible.Controls(p.Err.Error()))
			continue
		}
		m := p.Marking
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\n", visible.Controls(p.Name), m.Tokens, p.Held(), m.Pending, m.Aside)
	}
	var claims []string
	for _, p := range r.Places {
		if p.Marking == nil {
			continue
		}
		for _, h := range p.Marking.Holders {
			n := len(h.Claims) + len(h.Locks)
			if n == 0 {
				continue
			}
			state := "live"
			if h.Taker != nil {
				state = "being taken back"
			} else if lease := r.lease(h.Owner.String()); !h.Live(lease, r.At) {
				state = "dead: taken back at the next look"
			}
			claims = append(claims, fmt.Sprintf("  %s\t%s pid %d\t%s\t%d\t%s\n", visible.Controls(p.Name), visible.Controls(h.Owner.Host), h.Owner.PID, round(r.At.Sub(h.Renewed)), n, state))
		}
	}
	if len(claims) > 0 {
		fmt.Fprintf(tw, "claims in flight\n  PLACE\tOWNER\tRENEWED\tHELD\tSTATE\n")
		for _, c := range claims {
			fmt.Fprint(tw, c)
		}
	}
	if len(r.Stages) > 0 {
		fmt.Fprintf(tw, "stages\n  STAGE\tWORKERS\tDONE\tFAILED\tRETRIED\tRATE/S\tLATENCY\tWAITING\n")
		for _, s := range r.Stages {
			fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%.2f\t%s\t%d\n", visible.Controls(s.Name), s.Workers, s.Done, s.Failed, s.Retried, s.Rate,
				round(time.Duration(s.Latency*float64(time.Second))), s.Waiting)
		}
	}
	for _, s := range r.Stages {
		if s.PutBack > 0 {
			fmt.Fprintf(tw, "put back: %d of %s, whose input changed while it ran (written to while a job; drop jobs whole: tpipe put, or mv)\n", s.PutBack, visible.Controls(s.Name))
		}
	}
	failed := 0
	var where []string
	for _, s := range r.Stages {
		if s.FailedTokens > 0 {
			failed += s.FailedTokens
			where = append(where, s.FailedPlaces...)
		}
	}
	if failed > 0 {
		fmt.Fprintf(tw, "failed jobs: %d (in %s)\n", failed, visible.Controls(strings.Join(where, ", ")))
	}
	live, stopped := 0, 0
	for _, wk := range r.Workers {
		if wk.Live {
			live++
		} else {
			stopped++
		}
	}
	fmt.Fprintf(tw, "workers: %d live, %d stopped or dead\n", live, stopped)
	if r.Bottleneck != "" {
		fmt.Fprintf(tw, "bottleneck: %s (%s)\n", visible.Controls(r.Bottleneck), r.Why)
	} else if len(r.Stages) > 0 {
		fmt.Fprintf(tw, "bottleneck: none, no stage has work waiting\n")
	}
	return tw.Flush()
}

// lease is the lease of the worker named owner, by its status file, or
// place's default.
func (r *Report) lease(owner string) time.Duration {
	for _, wk := range r.Workers {
		if wk.Owner == owner && wk.LeaseSeconds > 0 {
			return time.Duration(wk.LeaseSeconds * float64(time.Second))
		}
	}
	return 30 * time.Second
}

// net is the Petri net of the report: places, transitions and arcs, with
// ids for the exports.
type net struct {
	places      []netPlace
	transitions []string
	arcs        [][2]string // source id, target id
	dashed      map[int]bool
}

type netPlace struct {
	id, name string
	tokens   int
}

func (r *Report) net() *net {
	n := &net{dashed: map[int]bool{}}
	ids := map[string]string{}
	placeID := func(name string) string {
		if id, ok := ids[name]; ok {
			return id
		}
		id := "p" + strconv.Itoa(len(n.places))
		ids[name] = id
		tokens := 0
		for _, p := range r.Places {
			if p.Name == name && p.Marking != nil {
				tokens = p.Marking.Tokens
			}
		}
		n.places = append(n.places, netPlace{id, name, tokens})
		return id
	}
	for _, p := range r.Places {
		placeID(p.Name)
	}
	for i, s := range r.Stages {
		t := "t" + strconv.Itoa(i)
		n.transitions = append(n.transitions, s.Name)
		for _, in := range s.Inputs {
			n.arcs = append(n.arcs, [2]string{placeID(relPath(r.Dir, resolve(r.Dir, in))), t})
		}
		for _, out := range s.Outputs {
			n.arcs = append(n.arcs, [2]string{t, placeID(relPath(r.Dir, resolve(r.Dir, out)))})
		}
		for _, f := range s.FailedPlaces {
			n.dashed[len(n.arcs)] = true
			id := placeID(relPath(r.Dir, resolve(r.Dir, f)))
			n.arcs = append(n.arcs, [2]string{t, id})
			for i := range n.places {
				if n.places[i].id == id {
					n.places[i].tokens = countFailed(resolve(r.Dir, f))
				}
			}
		}
	}
	return n
}

// WriteDot writes the net in Graphviz DOT: places as circles with their
// token counts, transitions as boxes, arcs to failed places dashed.
func (r *Report) WriteDot(w io.Writer) error {
	n := r.net()
	var b strings.Builder
	b.WriteString("digraph tpipe {\n  rankdir=LR;\n")
	for _, p := range n.places {
		fmt.Fprintf(&b, "  %s [shape=circle, label=%s];\n", p.id, strconv.Quote(fmt.Sprintf("%s\n%d", p.name, p.tokens)))
	}
	for i, t := range n.transitions {
		label := t
		if r.Bottleneck == t {
			label += "\n(bottleneck)"
		}
		fmt.Fprintf(&b, "  t%d [shape=box, label=%s];\n", i, strconv.Quote(label))
	}
	for i, a := range n.arcs {
		style := ""
		if n.dashed[i] {
			style = " [style=dashed]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", a[0], a[1], style)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// PNML, the Petri Net Markup Language (ISO/IEC 15909-2), for a
// place/transition net.
type pnmlDoc struct {
	XMLName xml.Name `xml:"pnml"`
	XMLNS   string   `xml:"xmlns,attr"`
	Net     pnmlNet  `xml:"net"`
}

type pnmlNet struct {
	ID   string   `xml:"id,attr"`
	Type string   `xml:"type,attr"`
	Name pnmlText `xml:"name"`
	Page pnmlPage `xml:"page"`
}

type pnmlText struct {
	Text string `xml:"text"`
}

type pnmlPage struct {
	ID          string           `xml:"id,attr"`
	Places      []pnmlPlace      `xml:"place"`
	Transitions []pnmlTransition `xml:"transition"`
	Arcs        []pnmlArc        `xml:"arc"`
}

type pnmlPlace struct {
	ID      string    `xml:"id,attr"`
	Name    pnmlText  `xml:"name"`
	Marking *pnmlText `xml:"initialMarking,omitempty"`
}

type pnmlTransition struct {
	ID   string   `xml:"id,attr"`
	Name pnmlText `xml:"name"`
}

type pnmlArc struct {
	ID     string `xml:"id,attr"`
	Source string `xml:"source,attr"`
	Target string `xml:"target,attr"`
}

// WritePNML writes the net as PNML: each place with its token count as
// the initial marking, each stage a transition, each input and output an
// arc.
func (r *Report) WritePNML(w io.Writer) error {
	n := r.net()
	doc := pnmlDoc{
		XMLNS: "http://www.pnml.org/version-2009/grammar/pnml",
		Net: pnmlNet{
			ID: "tpipe", Type: "http://www.pnml.org/version-2009/grammar/ptnet",
			Name: pnmlText{r.Dir},
			Page: pnmlPage{ID: "page0"},
		},
	}
	pg := &doc.Net.Page
	for _, p := range n.places {
		pp := pnmlPlace{ID: p.id, Name: pnmlText{p.name}}
		if p.tokens > 0 {
			pp.Marking = &pnmlText{strconv.Itoa(p.tokens)}
		}
		pg.Places = append(pg.Places, pp)
	}
	for i, t := range n.transitions {
		pg.Transitions = append(pg.Transitions, pnmlTransition{ID: "t" + strconv.Itoa(i), Name: pnmlText{t}})
	}
	for i, a := range n.arcs {
		pg.Arcs = append(pg.Arcs, pnmlArc{ID: "a" + strconv.Itoa(i), Source: a[0], Target: a[1]})
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
