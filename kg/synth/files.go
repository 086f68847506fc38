package synth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/kg"
)

// Files names the files WriteFiles writes: the KG, and the test and
// training questions when their names are not empty; with
// Config.Complex, the complex test and training questions (JSON lines,
// ComplexQuestion) where named.
type Files struct {
	KG, Questions, Train  string
	Complex, ComplexTrain string
}

// ntriples reports whether the KG file path is written as N-Triples: its
// name ends in .nt; TSV otherwise.
func ntriples(path string) bool {
	f, ok := kg.FormatOfName(path)
	return ok && f == kg.FormatNTriples
}

// CheckKGName refuses a KG file name that says a format WriteFiles does not
// write there (N-Triples to a .nt file, TSV otherwise); flag names the
// setting the name came from.
func CheckKGName(flag, path string) error {
	if ntriples(path) {
		return nil
	}
	return kg.CheckOutputName(flag, path, kg.FormatTSV)
}

// WriteFiles generates the graph cfg describes (WriteSplits) into the files
// f names, each written atomically. The question files are renamed into
// place first, inside the KG's write, so the KG never appears without its
// questions. A KG named .nt is written as N-Triples (names under
// Freebase's ns:, as stem kg export writes them), converted line by line
// from the TSV the generator streams: a graph of 10^7 triples is not built
// to export it.
func WriteFiles(ctx context.Context, cfg Config, f Files, progress func(done, total int64)) (Stats, error) {
	var st Stats
	err := writeAll([]string{f.KG, f.Questions, f.Train, f.Complex, f.ComplexTrain}, func(ws []io.Writer) error {
		qs := [4]io.Writer{ws[1], ws[2], ws[3], ws[4]}
		if !ntriples(f.KG) {
			var err error
			st, err = writeSplits(ctx, cfg, ws[0], qs, progress)
			return err
		}
		enc, err := kg.NewNTriplesEncoder(ws[0], "")
		if err != nil {
			return err
		}
		if st, err = writeSplits(ctx, cfg, &tsvToNT{enc: enc}, qs, progress); err != nil {
			return err
		}
		return enc.Flush()
	})
	return st, err
}

// WriteText prints what WriteFiles wrote to f: the graph's counts and
// degrees, and the question files'.
func (st Stats) WriteText(w io.Writer, f Files) {
	fmt.Fprintf(w, "wrote %s: %d triples, %d entities, %d relations used (schema %d), %d CVTs, %d namesakes, %d duplicates\n",
		f.KG, st.Triples, st.Entities, st.Relations, st.Schema, st.CVTs, st.Namesakes, st.Duplicates)
	fmt.Fprintf(w, "degree: max %d (%s), median %d, %d hubs (degree >= max(1000, triples/1000))\n",
		st.MaxDegree, st.MaxDegreeEntity, st.MedianDegree, st.Hubs)
	if f.Questions != "" {
		fmt.Fprintf(w, "wrote %s: %d questions (1/2/3 hops: %d/%d/%d; %d through a CVT)\n",
			f.Questions, st.Questions, st.QuestionsByHops[1], st.QuestionsByHops[2], st.QuestionsByHops[3], st.QuestionsViaCVT)
	}
	if f.Train != "" {
		fmt.Fprintf(w, "wrote %s: %d training questions\n", f.Train, st.TrainQuestions)
	}
	for _, c := range []struct {
		path   string
		counts map[string]int
	}{{f.Complex, st.Complex}, {f.ComplexTrain, st.ComplexTrain}} {
		if c.path == "" || c.counts == nil {
			continue
		}
		var parts []string
		total := 0
		for _, k := range ComplexKinds {
			parts = append(parts, fmt.Sprintf("%s %d", k, c.counts[k]))
			total += c.counts[k]
		}
		fmt.Fprintf(w, "wrote %s: %d complex questions (%s)\n", c.path, total, strings.Join(parts, ", "))
	}
}

// writeAll writes the files of paths atomically, the last first, each
// inside the next one's write (so the first file, the KG, appears last and
// never without the others); fill gets one writer per path, nil for an
// empty path.
func writeAll(paths []string, fill func([]io.Writer) error) error {
	ws := make([]io.Writer, len(paths))
	var step func(i int) error
	step = func(i int) error {
		if i < 0 {
			return fill(ws)
		}
		if paths[i] == "" {
			return step(i - 1)
		}
		return atomicfile.Write(paths[i], 0o644, func(w io.Writer) error {
			ws[i] = w
			return step(i - 1)
		})
	}
	return step(len(paths) - 1)
}

// tsvToNT turns the TSV lines the generator writes into N-Triples.
type tsvToNT struct {
	enc  *kg.NTriplesEncoder
	line []byte
}

func (t *tsvToNT) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.line = append(t.line, p...)
			break
		}
		t.line = append(t.line, p[:i]...)
		p = p[i+1:]
		f := strings.Split(string(t.line), "\t")
		t.line = t.line[:0]
		if len(f) != 3 {
			return 0, fmt.Errorf("synth wrote a line of %d fields", len(f))
		}
		t.enc.Add(f[0], f[1], f[2])
	}
	return n, nil
}
