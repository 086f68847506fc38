package benchmark

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/stem-kgqa/stem/kg"
)

// Source names a dataset's files, as the commands' data flags give them.
type Source struct {
	// Format is a registered format's name (see Formats).
	Format string
	// Questions are the question files, read in order.
	Questions []string
	// KG is the shared KG (a file, or a URL such as a SPARQL endpoint's)
	// of the formats answered over one KG. Given to a format whose questions bring their
	// own graphs (webqsp-mini, rog), it replaces those graphs: every
	// question is asked of this one KG (see Union).
	KG string
	// QTypes are MetaQA's question-type files, one per question file.
	QTypes []string
	// GoldPaths is a rog_paths_*.jsonl file with gold relation paths.
	GoldPaths string
}

// Dataset is a loaded benchmark: its questions and, for formats answered
// over one KG, that KG.
type Dataset struct {
	Questions []Question
	// KG is the shared KG; nil when every question carries its own.
	KG kg.Reader
	// Graph is KG when it is held in memory (a file), nil otherwise.
	Graph *kg.Graph
}

// OpenKG opens a shared KG by its spec, a file or a URL (a kg.Registry's
// Open in the commands): package benchmark reads question files and opens
// no KG backend itself.
type OpenKG func(ctx context.Context, spec string) (kg.Reader, error)

// Format is one benchmark format: how its files load.
type Format struct {
	Name string
	// Doc is a line for help text: the files the format takes.
	Doc string
	// SharedKG says the questions are answered over one KG (Source.KG),
	// which is then required. The other formats bring each question's own
	// graph, and take Source.KG as an option: the shared setting.
	SharedKG bool
	load     func(ctx context.Context, src Source) ([]Question, error)
}

// Formats lists the benchmark formats, in the order help text shows them.
func Formats() []Format {
	return []Format{
		{Name: "pq", SharedKG: true, Doc: "PathQuestion: --questions Q.txt --kg KB.txt", load: func(ctx context.Context, src Source) ([]Question, error) {
			return eachFile(ctx, src.Questions, LoadPathQuestion)
		}},
		{Name: "synth", SharedKG: true, Doc: "complex questions of stem kg synth --complex, JSON lines with gold schema graphs: --questions C.jsonl --kg KB.tsv", load: func(ctx context.Context, src Source) ([]Question, error) {
			return eachFile(ctx, src.Questions, LoadSynth)
		}},
		{Name: "metaqa", SharedKG: true, Doc: "MetaQA: --questions qa_test_2hop.txt --kg kb.txt --qtype qtype_test_2hop.txt", load: loadMetaQA},
		{Name: "webqsp-mini", Doc: "WebQSP as released by GNN-RAG: --questions gnnrag_sbert_test.jsonl,gnnrag_lmsr_test.jsonl --gold-paths rog_paths_test.jsonl (each question's KG = the union of its evidence paths; with --kg, every question is asked of that one KG instead, e.g. the union of all of them written by 'stem data union')",
			load: func(ctx context.Context, src Source) ([]Question, error) {
				if src.GoldPaths == "" {
					return nil, fmt.Errorf("--format webqsp-mini needs --gold-paths rog_paths_test.jsonl")
				}
				return LoadWebQSP(ctx, src.Questions, src.GoldPaths)
			}},
		{Name: "rog", Doc: "RoG rows with their own subgraphs, JSONL or Parquet (the HuggingFace release, selected by .parquet or the PAR1 magic): --questions ROWS.jsonl|test-00000-of-00002.parquet[,...] [--gold-paths P.jsonl] [--kg FILE|URL: one KG for every question instead of its own]", load: loadRoG},
	}
}

// FormatNames lists the registered formats' names.
func FormatNames() []string {
	var out []string
	for _, f := range Formats() {
		out = append(out, f.Name)
	}
	return out
}

// LookupFormat returns the format called name.
func LookupFormat(name string) (Format, error) {
	fs := Formats()
	i := slices.IndexFunc(fs, func(f Format) bool { return f.Name == name })
	if i < 0 {
		return Format{}, UnknownFormat(name, FormatNames()...)
	}
	return fs[i], nil
}

// UnknownFormat is the error for a dataset --format word that is not one
// of valid. A KG file format word (tsv, nt, ...) is explained: the other
// commands' --format names the KG's format, this one the questions'.
func UnknownFormat(name string, valid ...string) error {
	if kg.IsFormatName(name) {
		return fmt.Errorf("--format %q names a KG file's format; here --format names the questions' format: %s (the KG's format is found from its file, --kg)", name, strings.Join(valid, ", "))
	}
	return fmt.Errorf("--format %q: want %s", name, strings.Join(valid, ", "))
}

// Check reports a source that cannot load, before any file is read: an
// unknown format, no question file, a shared-KG format without its KG.
func (src Source) Check() error {
	f, err := LookupFormat(src.Format)
	if err != nil {
		return err
	}
	if len(src.Questions) == 0 {
		return fmt.Errorf("--questions names no file")
	}
	if f.SharedKG && src.KG == "" {
		return fmt.Errorf("--format %s needs --kg FILE (or a SPARQL endpoint URL)", f.Name)
	}
	if f.Name == "metaqa" && len(src.QTypes) != len(src.Questions) {
		return fmt.Errorf("--format metaqa needs one --qtype file per --questions file (got %d and %d)", len(src.QTypes), len(src.Questions))
	}
	for _, p := range append(append(slices.Clone(src.Questions), src.QTypes...), src.KG, src.GoldPaths) {
		if p == "" || p == src.KG && !kg.IsPath(p) {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("dataset file: %w", err)
		}
	}
	return nil
}

// Load loads src's questions and, when src names one, opens the shared KG
// with open. The questions of an own-graph format loaded with a shared KG
// lose their own graphs, so that every stage asks the shared one.
func Load(ctx context.Context, src Source, open OpenKG) (*Dataset, error) {
	if err := src.Check(); err != nil {
		return nil, err
	}
	f, _ := LookupFormat(src.Format)
	d := &Dataset{}
	if src.KG != "" {
		if open == nil {
			return nil, fmt.Errorf("--kg %s: this command opens no shared KG", src.KG)
		}
		r, err := open(ctx, src.KG)
		if err != nil {
			return nil, err
		}
		d.KG = r
		d.Graph, _ = r.(*kg.Graph)
	}
	qs, err := f.LoadQuestions(ctx, src)
	if err != nil {
		return nil, err
	}
	if src.KG != "" {
		for i := range qs {
			qs[i].Graph = nil
		}
	}
	d.Questions = qs
	return d, nil
}

// LoadQuestions loads src's questions alone, for callers that hold the
// shared KG already.
func (f Format) LoadQuestions(ctx context.Context, src Source) ([]Question, error) {
	if f.Name == "metaqa" && len(src.QTypes) != len(src.Questions) {
		return nil, fmt.Errorf("--format metaqa needs one --qtype file per --questions file (got %d and %d)", len(src.QTypes), len(src.Questions))
	}
	return f.load(ctx, src)
}

func eachFile(ctx context.Context, files []string, load func(context.Context, string) ([]Question, error)) ([]Question, error) {
	var out []Question
	for _, f := range files {
		part, err := load(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

func loadMetaQA(ctx context.Context, src Source) ([]Question, error) {
	var out []Question
	for i, f := range src.Questions {
		part, err := LoadMetaQA(ctx, f, src.QTypes[i])
		if err != nil {
			return nil, err
		}
		out = append(out, part...)
	}
	return out, nil
}

func loadRoG(ctx context.Context, src Source) ([]Question, error) {
	var gold map[string][][]string
	if p := src.GoldPaths; p != "" {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		gold, err = ReadGroundPaths(ctx, f, p)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return eachFile(ctx, src.Questions, func(ctx context.Context, f string) ([]Question, error) { return LoadRoG(ctx, f, gold) })
}
