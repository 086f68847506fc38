package kg

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteText prints the statistics for a person, under the heading name.
func (s Stats) WriteText(w io.Writer, name string) {
	fmt.Fprintf(w, "%s\n", name)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  entities\t%d\n", s.Entities)
	fmt.Fprintf(tw, "  relations\t%d\n", s.Relations)
	fmt.Fprintf(tw, "  triples\t%d\n", s.Triples)
	if s.Duplicates > 0 {
		fmt.Fprintf(tw, "  duplicate lines dropped\t%d\n", s.Duplicates)
	}
	if s.NoDegree {
		fmt.Fprintf(tw, "  degree max / p50 / p99\tnot computed (a full scan of the endpoint)\n")
	} else {
		fmt.Fprintf(tw, "  degree max / p50 / p99\t%d / %v / %v\n", s.MaxDegree, s.P50Degree, s.P99Degree)
	}
	tw.Flush()
	if len(s.TopRelations) > 0 {
		fmt.Fprintf(w, "  top relations:\n")
		width := len(fmt.Sprint(s.TopRelations[0].Count))
		for _, rc := range s.TopRelations {
			fmt.Fprintf(w, "    %*d  %s\n", width, rc.Count, rc.Name)
		}
	}
}

// WriteNeighbourhood prints entity e's edges grouped by relation and
// direction, at most limit entities a group (0 = all), so hub nodes stay
// readable. Groups and the entities in them are in name order, so every
// backend prints the same.
func WriteNeighbourhood(w io.Writer, g Reader, e int32, limit int) {
	type group struct {
		rel      int32
		incoming bool
		others   []string
	}
	groups := map[[2]int32]*group{}
	var order [][2]int32
	add := func(rel int32, incoming bool, other int32) {
		dir := int32(0)
		if incoming {
			dir = 1
		}
		k := [2]int32{rel, dir}
		gr, ok := groups[k]
		if !ok {
			gr = &group{rel: rel, incoming: incoming}
			groups[k] = gr
			order = append(order, k)
		}
		gr.others = append(gr.others, g.EntityName(other))
	}
	for _, t := range g.Out(e) {
		tr := g.Triple(t)
		add(tr.Rel, false, tr.Tail)
	}
	for _, t := range g.In(e) {
		tr := g.Triple(t)
		add(tr.Rel, true, tr.Head)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := groups[order[i]], groups[order[j]]
		if a.incoming != b.incoming {
			return !a.incoming
		}
		return g.RelationName(a.rel) < g.RelationName(b.rel)
	})
	name := g.EntityName(e)
	fmt.Fprintf(w, "%s  (%d out, %d in)\n", name, len(g.Out(e)), len(g.In(e)))
	for _, k := range order {
		gr := groups[k]
		// By name, not by id: ids are the backend's numbering.
		sort.Strings(gr.others)
		shown := gr.others
		more := 0
		if limit > 0 && len(shown) > limit {
			more = len(shown) - limit
			shown = shown[:limit]
		}
		list := strings.Join(shown, ", ")
		if more > 0 {
			list += fmt.Sprintf(", ... (%d more)", more)
		}
		if gr.incoming {
			fmt.Fprintf(w, "  <- %s <- %s\n", g.RelationName(gr.rel), list)
		} else {
			fmt.Fprintf(w, "  -> %s -> %s\n", g.RelationName(gr.rel), list)
		}
	}
}

// Lookup finds an entity by its exact name, else by its name matched
// ignoring case and punctuation (EntitiesByNorm).
func Lookup(r Reader, name string) []int32 {
	if id, ok := r.Entity(name); ok {
		return []int32{id}
	}
	return r.EntitiesByNorm(name)
}
