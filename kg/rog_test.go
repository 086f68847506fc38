package kg

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestReadRoGFixture(t *testing.T) {
	f, err := os.Open("testdata/rog_small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []RoGRow
	err = ReadRoG(context.Background(), f, "rog_small.jsonl", func(r RoGRow) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	r0 := rows[0]
	if r0.ID != "WebQTest-0" || r0.Question != "what does jamaican people speak" || r0.Line != 1 {
		t.Errorf("row 0 = %q %q line %d", r0.ID, r0.Question, r0.Line)
	}
	if want := []string{"Jamaican English", "Jamaican Creole English Language"}; !slices.Equal(r0.Answers, want) || !slices.Equal(r0.AEntities, want) {
		t.Errorf("row 0 answers = %q, a_entity = %q", r0.Answers, r0.AEntities)
	}
	if !slices.Equal(r0.QEntities, []string{"Jamaica"}) {
		t.Errorf("row 0 q_entity = %q", r0.QEntities)
	}
	g := r0.Graph
	if g.NumTriples() != 6 || g.Duplicates() != 1 || g.NumEntities() != 5 || g.NumRelations() != 5 {
		t.Errorf("row 0 graph: %d triples, %d dups, %d entities, %d relations; want 6, 1, 5, 5",
			g.NumTriples(), g.Duplicates(), g.NumEntities(), g.NumRelations())
	}
	jam, _ := g.Entity("Jamaica")
	eng, _ := g.Entity("Jamaican English")
	spoken, _ := g.Relation("location.country.languages_spoken")
	official, _ := g.Relation("location.country.official_language")
	if !g.HasTriple(jam, spoken, eng) || !g.HasTriple(jam, official, eng) {
		t.Error("row 0: parallel edges Jamaica -> Jamaican English not both kept")
	}
	checkInvariants(t, g)

	r1 := rows[1]
	if r1.Line != 3 || !slices.Equal(r1.Answers, []string{"Lawyer"}) || r1.Graph.NumTriples() != 3 {
		t.Errorf("row 1: line %d, answers %q, %d triples", r1.Line, r1.Answers, r1.Graph.NumTriples())
	}
	r2 := rows[2]
	if r2.Graph == nil || r2.Graph.NumTriples() != 0 || r2.Graph.NumEntities() != 0 || len(r2.Answers) != 0 {
		t.Errorf("row 2 (empty graph): %+v", r2)
	}
	if got := r2.Graph.EntitiesByNorm("x"); got != nil {
		t.Errorf("empty graph EntitiesByNorm = %v", got)
	}
	if s := r2.Graph.Stats(3); s.Entities != 0 || s.MaxDegree != 0 || s.TopRelations != nil {
		t.Errorf("empty graph stats = %+v", s)
	}
}

func TestReadRoGErrors(t *testing.T) {
	ok := `{"id":"a","question":"q","graph":[["h","r","t"]]}`
	tests := []struct {
		name    string
		in      string
		wantErr error
		errMsg  string
	}{
		{"bad json", ok + "\n{\"id\": \n", ErrSyntax, "rog.jsonl:2: syntax error"},
		{"graph not a list", `{"id":"a","graph":"x"}`, ErrSyntax, "rog.jsonl:1: syntax error"},
		{"number in triple", `{"id":"a","graph":[["h","r",3]]}`, ErrSyntax, "rog.jsonl:1: syntax error"},
		{"two columns", ok + "\n\n" + `{"id":"b","graph":[["h","r","t"],["h","r"]]}`, ErrColumns, "rog.jsonl:3: graph triple 2: wrong number of columns (got 2 columns, want 3)"},
		{"four columns", `{"id":"b","graph":[["h","r","t","x"]]}`, ErrColumns, "rog.jsonl:1: graph triple 1: wrong number of columns (got 4 columns, want 3)"},
		{"empty tail", `{"id":"b","graph":[["h","r",""]]}`, ErrEmptyField, "rog.jsonl:1: graph triple 1: empty tail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ReadRoG(context.Background(), strings.NewReader(tt.in), "rog.jsonl", func(RoGRow) error { return nil })
			if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.errMsg) {
				t.Fatalf("err = %v, want %v containing %q", err, tt.wantErr, tt.errMsg)
			}
		})
	}
}

func TestReadRoGStopAndCancel(t *testing.T) {
	in := strings.Repeat(`{"id":"a","graph":[["h","r","t"]]}`+"\n", 5)
	stop := errors.New("stop")
	n := 0
	err := ReadRoG(context.Background(), strings.NewReader(in), "rog.jsonl", func(RoGRow) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Errorf("err = %v after %d rows, want the callback's error after 2", err, n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = ReadRoG(ctx, strings.NewReader(in), "rog.jsonl", func(RoGRow) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
