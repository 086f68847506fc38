package models

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteSimilarities prints the pairwise cosine similarities of texts,
// whose vectors are the rows of vecs (dim columns each, as EncodeAll
// returns them), as a right-aligned table with a row and a column per
// text; with vectors it then prints each vector, to compare encoders.
func WriteSimilarities(w io.Writer, texts []string, vecs []float32, dim int, vectors bool) error {
	if len(vecs) != len(texts)*dim {
		return fmt.Errorf("models: similarities of %d texts of %d dims: got %d numbers, want %d", len(texts), dim, len(vecs), len(texts)*dim)
	}
	row := func(i int) []float32 { return vecs[i*dim : (i+1)*dim] }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "\t")
	for j := range texts {
		fmt.Fprintf(tw, "[%d]\t", j)
	}
	fmt.Fprintln(tw)
	for i, t := range texts {
		fmt.Fprintf(tw, "[%d] %s\t", i, t)
		for j := range texts {
			fmt.Fprintf(tw, "%.3f\t", Cosine(row(i), row(j)))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil || !vectors {
		return err
	}
	for i := range texts {
		parts := make([]string, dim)
		for k, x := range row(i) {
			parts[k] = fmt.Sprintf("%.5g", x)
		}
		if _, err := fmt.Fprintf(w, "[%d] %s\n", i, strings.Join(parts, " ")); err != nil {
			return err
		}
	}
	return nil
}
