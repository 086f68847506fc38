package chains

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/train/dataset"
)

// FuzzFind checks Find and Mask on small random graphs against invariants
// and an independent count of shortest paths: every chain is a walk of KG
// triples from a question entity to its answer within MaxHops; with no
// minimum, a chain to an answer that is not a question entity is exactly
// as long as the answer's distance and Found equals the number of shortest
// paths; the cap holds; the item made from the chains checks.
func FuzzFind(f *testing.F) {
	f.Add([]byte{0, 0, 1, 1, 0, 2, 2, 1, 3}, uint8(0), uint8(3), uint8(3), uint8(0))
	f.Add([]byte{0, 0, 1, 1, 1, 0, 1, 2, 2, 2, 0, 2}, uint8(0), uint8(2), uint8(2), uint8(1))
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 0, 0, 3, 1, 4, 4, 2, 5}, uint8(0), uint8(0), uint8(3), uint8(2))
	f.Add([]byte{0, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1, 2, 2, 0, 3, 3, 1, 4, 4, 0, 5}, uint8(0), uint8(5), uint8(1), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, start, answer, maxPaths, minHops uint8) {
		b := kg.NewBuilder()
		const nEnt, nRel = 7, 3
		for i := 0; i+2 < len(data) && i < 3*40; i += 3 {
			b.Add(fmt.Sprint("e", data[i]%nEnt), fmt.Sprint("r", data[i+1]%nRel), fmt.Sprint("e", data[i+2]%nEnt))
		}
		if b.Len() == 0 {
			return
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		n := int32(g.NumEntities())
		s, a := int32(start)%n, int32(answer)%n
		opt := Options{MaxHops: 3, MaxPaths: int(maxPaths%8) + 1, MinHops: int(minHops % 4)}
		fd := NewFinder(g, opt)
		res := fd.Find([]int32{s}, []int32{a})
		if len(res.Chains) > opt.MaxPaths || res.Found < int64(len(res.Chains)) || res.Capped != res.Found-int64(len(res.Chains)) {
			t.Fatalf("%d chains, found %d, capped %d, cap %d", len(res.Chains), res.Found, res.Capped, opt.MaxPaths)
		}
		dist, paths := shortestPaths(g, s, a)
		for _, c := range res.Chains {
			if c.Start() != s || c.End() != a || c.Len() < 1 || c.Len() > opt.MaxHops || len(c.Entities) != c.Len()+1 {
				t.Fatalf("chain %v from %d to %d", c, s, a)
			}
			for i, id := range c.Triples {
				tr := g.Triple(id)
				u, v := c.Entities[i], c.Entities[i+1]
				if !(tr.Head == u && tr.Tail == v || tr.Head == v && tr.Tail == u) {
					t.Fatalf("step %d of %v is not triple %d", i, c, id)
				}
				if i > 0 && c.Triples[i-1] == id {
					t.Fatalf("chain %v walks triple %d twice in a row", c, id)
				}
			}
			if s != a && opt.MinHops <= 1 && c.Len() != dist {
				t.Fatalf("chain of %d triples, distance %d", c.Len(), dist)
			}
		}
		if s != a && opt.MinHops <= 1 {
			if dist >= 1 && dist <= opt.MaxHops {
				if res.Found != paths {
					t.Fatalf("found %d shortest chains, want %d", res.Found, paths)
				}
			} else if len(res.Chains) != 0 || len(res.Unreachable) != 1 {
				t.Fatalf("answer at distance %d: %d chains, unreachable %v", dist, len(res.Chains), res.Unreachable)
			}
		}
		if len(res.Chains) == 0 {
			return
		}
		ev := Mask(g, []int32{s}, res.Chains)
		it := dataset.Item{ID: "x", Masked: ev.Masked, Triples: ev.Triples, AnswerSlot: ev.AnswerSlot, Strategy: dataset.Precision}
		if err := it.Check(); err != nil {
			t.Fatal(err)
		}
		for p, e := range ev.Placeholders {
			if id, ok := g.Entity(e); !ok || id == s && s != a {
				t.Fatalf("placeholder %s hides %s", p, e)
			}
		}
		if want := g.EntityName(a); ev.AnswerSlot != "" && ev.Placeholders[ev.AnswerSlot] != want || ev.AnswerSlot == "" && s != a {
			t.Fatalf("answer slot %q hides %q, want %s", ev.AnswerSlot, ev.Placeholders[ev.AnswerSlot], want)
		}
		// The schema graph: a valid item whose answer is the highest
		// placeholder and hides the answer, each masked triple the KG
		// triple beside it with only placeholders swapped in.
		sch := Schema(g, []int32{s}, res.Chains, 2)
		it = dataset.Item{ID: "x", Masked: sch.Masked, Triples: sch.Triples, AnswerSlot: sch.AnswerSlot, Strategy: dataset.Precision}
		if err := it.Check(); err != nil {
			t.Fatal(err)
		}
		if want := "[ENT" + strconv.Itoa(len(sch.Placeholders)) + "]"; sch.AnswerSlot != want || sch.Placeholders[want] != g.EntityName(a) {
			t.Fatalf("schema answer slot %s hides %s; want %s hiding %s (placeholders %v)", sch.AnswerSlot, sch.Placeholders[sch.AnswerSlot], want, g.EntityName(a), sch.Placeholders)
		}
		for i, m := range sch.Masked {
			tr := sch.Triples[i]
			for j := 0; j < 3; j += 2 {
				if m[j] != tr[j] && sch.Placeholders[m[j]] != tr[j] {
					t.Fatalf("masked %v beside %v", m, tr)
				}
			}
			if m[1] != tr[1] {
				t.Fatalf("masked %v beside %v", m, tr)
			}
		}
	})
}

// shortestPaths is a plain BFS over both edge directions without
// self-loops: the distance from s to a (-1 if none) and the number of
// shortest paths, parallel triples counted apart.
func shortestPaths(g *kg.Graph, s, a int32) (int, int64) {
	n := g.NumEntities()
	dist := make([]int, n)
	cnt := make([]int64, n)
	for i := range dist {
		dist[i] = -1
	}
	dist[s], cnt[s] = 0, 1
	queue := []int32{s}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for i := 0; i < g.NumTriples(); i++ {
			tr := g.Triple(int32(i))
			var v int32
			switch {
			case tr.Head == tr.Tail:
				continue
			case tr.Head == u:
				v = tr.Tail
			case tr.Tail == u:
				v = tr.Head
			default:
				continue
			}
			if dist[v] < 0 {
				dist[v] = dist[u] + 1
				queue = append(queue, v)
			}
			if dist[v] == dist[u]+1 {
				cnt[v] += cnt[u]
			}
		}
	}
	return dist[a], cnt[a]
}
