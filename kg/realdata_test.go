package kg

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stem-kgqa/stem/internal/shareddata"
)

// TestRealKBs loads the benchmark knowledge bases and checks the counts
// (measured with awk over the files, matching the data README), then the
// snapshot round trip on each.
func TestRealKBs(t *testing.T) {
	tests := []struct {
		rel                         string
		format                      Format
		entities, relations, triple int
		head, rel1, tail            string // one triple that must be present
	}{
		{"pathquestion/2H-kb.txt", FormatTSV, 1056, 13, 1211, "ludwig_ii_of_bavaria", "parents", "maximilian_ii_of_bavaria"},
		{"pathquestion/3H-kb.txt", FormatTSV, 1836, 13, 2839, "", "", ""},
		{"pathquestion/PQL2-KB.txt", FormatTSV, 5034, 363, 4247, "Khanty_people", "__people__ethnicity__languages_spoken", "Khanty_Language"},
		{"metaqa/kb.txt", FormatPipe, 42873, 9, 130471, "Kismet", "directed_by", "William Dieterle"},
	}
	for _, tt := range tests {
		t.Run(tt.rel, func(t *testing.T) {
			path := shareddata.Path(t, tt.rel)
			g, err := Load(context.Background(), path, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			if g.NumEntities() != tt.entities || g.NumRelations() != tt.relations || g.NumTriples() != tt.triple || g.Duplicates() != 0 {
				t.Errorf("%d entities, %d relations, %d triples, %d duplicates; want %d, %d, %d, 0",
					g.NumEntities(), g.NumRelations(), g.NumTriples(), g.Duplicates(), tt.entities, tt.relations, tt.triple)
			}
			if tt.head != "" {
				h, ok1 := g.Entity(tt.head)
				r, ok2 := g.Relation(tt.rel1)
				tl, ok3 := g.Entity(tt.tail)
				if !ok1 || !ok2 || !ok3 || !g.HasTriple(h, r, tl) {
					t.Errorf("triple (%s, %s, %s) not found", tt.head, tt.rel1, tt.tail)
				}
			}
			// The explicit format gives the same graph as detection.
			g2, err := Load(context.Background(), path, tt.format)
			if err != nil {
				t.Fatal(err)
			}
			graphsEqual(t, g, g2)
			snap := filepath.Join(t.TempDir(), "kb.kg")
			if err := WriteSnapshot(snap, g); err != nil {
				t.Fatal(err)
			}
			g3, err := Load(context.Background(), snap, FormatAuto)
			if err != nil {
				t.Fatal(err)
			}
			graphsEqual(t, g, g3)
		})
	}
}

func TestMetaQADetails(t *testing.T) {
	g, err := Load(context.Background(), shareddata.Path(t, "metaqa/kb.txt"), FormatAuto)
	if err != nil {
		t.Fatal(err)
	}
	s := g.Stats(3)
	// Relation counts measured with `cut -d'|' -f2 kb.txt | sort | uniq -c`.
	want := []RelationCount{{"starred_actors", 32747}, {"has_tags", 27907}, {"written_by", 18585}}
	for i, rc := range want {
		if s.TopRelations[i] != rc {
			t.Errorf("top relation %d = %v, want %v", i, s.TopRelations[i], rc)
		}
	}
	// MetaQA has a film called "$": the exact lookup finds it, the
	// normalised one cannot (its key is empty).
	if id, ok := g.Entity("$"); !ok || g.EntityText(id) != "$" {
		t.Errorf(`Entity("$") = %d, %v`, id, ok)
	}
	// Directors also appear as lower-case has_tags values: two entities,
	// one normalised name.
	ids := g.EntitiesByNorm("William_Dieterle")
	if len(ids) != 2 || g.EntityName(ids[0]) != "William Dieterle" || g.EntityName(ids[1]) != "william dieterle" {
		t.Errorf("EntitiesByNorm(William_Dieterle) = %v", ids)
	}
	checkInvariants(t, g)
}
