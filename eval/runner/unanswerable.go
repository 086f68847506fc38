package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
)

// Files an unanswerable variant's folder holds beside its KG and
// question files.
const (
	ManifestFile     = "unanswerable.json"
	LostIDsFile      = "unanswerable.ids"
	AnswerableIDFile = "answerable.ids"
)

// VariantOptions say where stem data unanswerable writes and how much it
// removes.
type VariantOptions struct {
	// Fraction is the share of questions whose answer edges go
	// (benchmark.UnanswerableSampled).
	Fraction float64
	// Out is the folder written (created).
	Out string
	// Force replaces files already there.
	Force bool
}

// WriteUnanswerable writes the unanswerable variant of d's benchmark into
// o.Out (stem data unanswerable): the KG without the answer edges of the
// sampled questions (benchmark.RemoveAnswers) under the name of d's KG
// (as a .tsv when its extension is not one kg.WriteFile writes), copies of
// the question, question-type and gold-path files, the manifest
// (ManifestFile), and the ids of the questions that lost their answer and
// of the others, one per line (LostIDsFile, AnswerableIDFile: --ids
// AnswerableIDFile on the original benchmark is the run to compare the
// variant's answerable questions with). It returns the manifest.
func WriteUnanswerable(ctx context.Context, d Dataset, o VariantOptions, log io.Writer) (*benchmark.Unanswerable, error) {
	if d.KG == "" {
		return nil, fmt.Errorf("--kg: the variant removes edges from the benchmark's shared KG; give it (for webqsp-mini, the union stem data union writes)")
	}
	kgOut := filepath.Join(o.Out, filepath.Base(d.KG))
	if kg.CheckWriteName(kgOut) != nil {
		kgOut = strings.TrimSuffix(kgOut, filepath.Ext(kgOut)) + ".tsv"
	}
	copies := map[string][]string{"questions": d.Questions, "qtype": d.QType}
	if d.GoldPaths != "" {
		copies["gold-paths"] = []string{d.GoldPaths}
	}
	inputs := append(append([]string{d.KG, d.GoldPaths, d.IDs}, d.Questions...), d.QType...)
	outs := []string{kgOut, filepath.Join(o.Out, ManifestFile), filepath.Join(o.Out, LostIDsFile), filepath.Join(o.Out, AnswerableIDFile)}
	files := map[string][]string{"kg": {filepath.Base(kgOut)}}
	for role, paths := range copies {
		for _, p := range paths {
			outs = append(outs, filepath.Join(o.Out, filepath.Base(p)))
			files[role] = append(files[role], filepath.Base(p))
		}
	}
	seen := map[string]bool{}
	for _, p := range outs {
		if seen[p] {
			return nil, fmt.Errorf("--out %s: two inputs would be written as %s", o.Out, filepath.Base(p))
		}
		seen[p] = true
		if err := atomicfile.CheckOutput("--out", p, o.Force, inputs...); err != nil {
			return nil, err
		}
	}
	data, err := d.Load(ctx, log)
	if err != nil {
		return nil, err
	}
	if data.Graph == nil {
		return nil, fmt.Errorf("--kg %s: the variant is built in memory; give the KG as a file", d.KG)
	}
	g, u, err := benchmark.RemoveAnswers(ctx, data.Graph, data.Questions, o.Fraction)
	if err != nil {
		return nil, err
	}
	u.Files = files
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	if err := kg.WriteFile(ctx, kgOut, g, kg.FreebaseNS); err != nil {
		return nil, err
	}
	for _, paths := range copies {
		for _, p := range paths {
			if err := copyFile(p, filepath.Join(o.Out, filepath.Base(p))); err != nil {
				return nil, err
			}
		}
	}
	lost := u.Lost()
	var lostQs, kept []benchmark.Question
	for _, q := range data.Questions {
		if lost[q.ID] {
			lostQs = append(lostQs, q)
		} else {
			kept = append(kept, q)
		}
	}
	for _, f := range []reportFile{
		{ManifestFile, u.Write},
		{LostIDsFile, func(w io.Writer) error { return benchmark.WriteIDs(w, lostQs) }},
		{AnswerableIDFile, func(w io.Writer) error { return benchmark.WriteIDs(w, kept) }},
	} {
		if err := atomicfile.Write(filepath.Join(o.Out, f.name), 0o644, f.fill); err != nil {
			return nil, err
		}
	}
	return u, nil
}

// reportFile is one file written and what fills it.
type reportFile struct {
	name string
	fill func(io.Writer) error
}

// copyFile copies from to to, atomically.
func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return fmt.Errorf("copy %s: %w", from, err)
	}
	defer in.Close()
	return atomicfile.Write(to, 0o644, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// VariantSummary says in one paragraph what a variant's manifest holds.
func VariantSummary(u *benchmark.Unanswerable) string {
	return fmt.Sprintf("removed %d answer triples of %d of %d questions (fraction %.2f by id hash); %d more questions lost their answer through those triples; %d questions' gold paths reach no answer in the original KG (never sampled)",
		len(u.Triples), len(u.Removed), u.Questions, u.Fraction, len(u.Unreachable), u.NoGoldPath)
}

// lostIDs reads the --unanswerable manifest: the ids of the questions its
// KG lacks the answers of; nil for "".
func lostIDs(path string) (map[string]bool, error) {
	if path == "" {
		return nil, nil
	}
	u, err := benchmark.ReadUnanswerable(path)
	if err != nil {
		return nil, fmt.Errorf("--unanswerable: %w", err)
	}
	return u.Lost(), nil
}
