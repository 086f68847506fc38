package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/stem-kgqa/stem/benchmark"
	"github.com/stem-kgqa/stem/kg"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/plan"
	"github.com/stem-kgqa/stem/progress"
)

// Prediction is a retriever's answer to one question.
type Prediction struct {
	// Answers are the predicted answer names, best first; they are the
	// "lines" the metrics score.
	Answers []string
	// EvidenceTriples are the (head, relation, tail) triples the answers
	// rest on, scored against the gold path for coverage.
	EvidenceTriples [][3]string
	// Unbacked counts answers (or claims) that no evidence triple supports.
	Unbacked int
	// Unsupported counts the answers a generator (an LLM) gave that name no
	// evidence entity. They are left out of Answers, so they are never
	// scored, even when one equals a gold answer; they count in Unbacked
	// too.
	Unsupported int
	// Stages optionally holds how long the answerer spent in each of its
	// stages (such as "plan", "guide", "trace"); Run summarises them per
	// stage in Report.StageMS. Nil when the answerer does not time them.
	// The "link" and "plan" stages are left out of the latency figures,
	// which time retrieval alone, as retrieval-only targets are stated.
	Stages map[string]time.Duration
	// Trace is what each stage produced, for attributing a failure to a
	// stage (Attribute); nil when the answerer does not report it, which
	// attributes its failures to FailUnknown.
	Trace *StageOutput
	// Chains are the evidence flattened into reasoning chains, as the
	// retriever wrote them ("A -> rel -> B <- rel <- C"); nil when the
	// answerer has none. Run only hands them to Options.OnAnswer.
	Chains []string
	// Confidence is the answerer's probability, in [0, 1], that its first
	// answer is right; it means something only when Calibrated is set
	// (an answerer with no confidence model leaves both zero, and the
	// report then has no calibration).
	Confidence float64
	Calibrated bool
	// Abstained is set when the answerer said "no answer" because its best
	// candidate fell below the confidence it was asked for
	// (--min-confidence); Answers is then empty and Abstain says why
	// ("best candidate 0.21 < 0.5").
	Abstained bool
	Abstain   string
}

// Answerer answers one benchmark question; Pipeline adapts stem's one
// pipeline to it. Run times each call.
type Answerer interface {
	Answer(ctx context.Context, q benchmark.Question) (Prediction, error)
}

// UsageReporter is an optional Answerer capability: an answerer that asks
// a language model reports the tokens and requests used so far, and Run
// puts what the run used in Report.LLM.
type UsageReporter interface {
	LLMUsage() llm.Usage
}

// LLMUse is a run's language-model use: totals and per question answered.
type LLMUse struct {
	Requests         int64   `json:"requests"`
	PromptTokens     int64   `json:"prompt_tokens"`
	CompletionTokens int64   `json:"completion_tokens"`
	RequestsPerQ     float64 `json:"requests_per_question"`
	// TokensPerQ is PromptTokensPerQ plus CompletionTokensPerQ.
	TokensPerQ           float64 `json:"tokens_per_question"`
	PromptTokensPerQ     float64 `json:"prompt_tokens_per_question"`
	CompletionTokensPerQ float64 `json:"completion_tokens_per_question"`
}

// llmUse is u over n questions; nil when no request was made.
func llmUse(u llm.Usage, n int) *LLMUse {
	if u.Requests == 0 {
		return nil
	}
	out := &LLMUse{Requests: u.Requests, PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if n > 0 {
		out.RequestsPerQ = float64(u.Requests) / float64(n)
		out.TokensPerQ = float64(u.PromptTokens+u.CompletionTokens) / float64(n)
		out.PromptTokensPerQ = float64(u.PromptTokens) / float64(n)
		out.CompletionTokensPerQ = float64(u.CompletionTokens) / float64(n)
	}
	return out
}

// Options tune Run.
type Options struct {
	// Graph is the shared KG for questions whose Graph is nil (PathQuestion,
	// MetaQA); it grounds their gold paths for coverage.
	Graph *kg.Graph
	// KeepGoing scores a question whose retriever call fails as having no
	// prediction and counts it in Report.Errors, instead of stopping.
	KeepGoing bool
	// PerQuestion keeps every question's result in Report.Questions.
	PerQuestion bool
	// Progress, when not nil, receives a progress bar.
	Progress io.Writer
	// Workers is how many questions are planned and answered at once; 0
	// and 1 answer them one by one. With more, the planner and retriever
	// must be safe for concurrent use. The report does not depend on it
	// (results are merged in question order), except for latency and
	// throughput.
	Workers int
	// Done holds results of an earlier run of the same configuration, such
	// as those read back from a results log: questions whose ID it holds
	// are not answered again but count in the report as if they had been.
	Done []Result
	// OnResult, when not nil, receives every newly scored result as soon as
	// it is scored (in the order questions finish, so not in question order
	// when Workers > 1), from one goroutine at a time. An error from it
	// stops the run. It is how a results log is written as the run goes.
	OnResult func(Result) error
	// OnAnswer, when not nil, receives every newly scored question with
	// the answerer's prediction (answers, evidence triples, chains) and
	// its result, under OnResult's rules and right after it. It is how
	// files that carry the evidence are written as the run goes
	// (eval/rogfile); Run keeps no prediction after the call.
	OnAnswer func(q benchmark.Question, p Prediction, r Result) error
	// Unanswerable, when not nil, holds the ids of the questions whose
	// answers the KG was made to lack (stem data unanswerable): the report
	// then says how many of them were abstained and what the others
	// scored (Report.Unanswerable, Report.Answerable).
	Unanswerable map[string]bool
}

// Scores are averaged answer metrics, in percent, over N questions.
// Coverage is averaged over the CoverageN questions where it is defined.
type Scores struct {
	N         int     `json:"n"`
	Hits1     float64 `json:"hits1"`
	Hit       float64 `json:"hit"`
	F1        float64 `json:"f1"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	Coverage  float64 `json:"coverage"`
	CoverageN int     `json:"coverage_n"`
	// MRR is the mean reciprocal rank of the first right answer and HitK
	// the share with one in the first eval.HitAtK (Score.RR, Score.HitK),
	// in percent; Answers is the mean number of answers returned, the
	// list length Hit and F1 depend on.
	MRR     float64 `json:"mrr"`
	HitK    float64 `json:"hit_at_k"`
	Answers float64 `json:"answers"`
}

// Bucket is the scores of one slice of the questions.
type Bucket struct {
	Label string `json:"label"`
	Scores
}

// Latency summarises per-question retriever time in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Slow is one of a run's slowest questions: its retriever time and how
// long each stage took, so that a tail can be traced to its stage.
type Slow struct {
	ID        string             `json:"id"`
	LatencyMS float64            `json:"latency_ms"`
	StagesMS  map[string]float64 `json:"stages_ms,omitempty"`
}

// slowest is how many of the slowest questions a report names.
const slowest = 5

// Result is one question's outcome.
type Result struct {
	ID string `json:"id"`
	Score
	Answers []string `json:"answers"`
	// Coverage is -1 when undefined (no gold triples).
	Coverage float64 `json:"coverage"`
	Unbacked int     `json:"unbacked"`
	// Unsupported is Prediction.Unsupported: generated answers left
	// unscored because no evidence backs them.
	Unsupported int     `json:"unsupported"`
	LatencyMS   float64 `json:"latency_ms"`
	// StagesMS is Prediction.Stages in milliseconds.
	StagesMS map[string]float64 `json:"stages_ms,omitempty"`
	Hops     int                `json:"hops"`
	Err      string             `json:"error,omitempty"`
	// Failure is the stage a question with no hit is attributed to
	// (Attribute); empty for a hit.
	Failure string `json:"failure,omitempty"`
	// Extra is why a question whose answers are a superset of its gold
	// set has the extra ones (AttributeExtras, ExtraClasses); empty
	// otherwise.
	Extra string `json:"extra,omitempty"`
	// Plans are the relation names of each candidate schema graph, best
	// first (StageOutput.Plans), so that a results log shows which plan a
	// question was answered with; nil when the answerer does not report
	// them.
	Plans [][]string `json:"plans,omitempty"`
	// Mentions are the spans beside the topic entities that name an
	// entity, as "text=entity" ("text~entity" for a near match through the
	// entity index; StageOutput.Mentions), so that a results
	// log shows what else a question was read to name.
	Mentions []string `json:"mentions,omitempty"`
	// Confidence is Prediction.Confidence, nil when the answerer gave
	// none (Prediction.Calibrated unset).
	Confidence *float64 `json:"confidence,omitempty"`
	// Abstained and Abstain are Prediction's: the question was answered
	// "no answer", and why.
	Abstained bool   `json:"abstained,omitempty"`
	Abstain   string `json:"abstain,omitempty"`
}

// Report is a run's scores.
type Report struct {
	Scores
	// Mode labels how the retrieval strategy ran (plan.Pipeline.Mode: a
	// peer standing alone or planner-assisted, and what scored it), for
	// the caller to record; Run leaves it "".
	Mode string `json:"mode,omitempty"`
	// Planner names the planner that planned the questions
	// (plan.Pipeline.PlannerName: oracle, pattern, compose, ...), ""
	// when none did; UpperBound marks the oracle's run, whose plans are
	// the gold relation paths: it measures retrieval alone, an upper
	// bound on what a planner reaches from the question, not stem's
	// score. Label sets both; Run leaves them to the caller.
	Planner    string `json:"planner,omitempty"`
	UpperBound bool   `json:"upper_bound,omitempty"`
	// Beam is the readings the planner traced per question
	// (plan.Pipeline.Beam: --beam, or the selector's recorded beam);
	// Label sets it, 0 when the pipeline does not say.
	Beam int `json:"beam,omitempty"`
	// Unbacked sums Prediction.Unbacked over the questions.
	Unbacked int `json:"unbacked"`
	// Unsupported sums Prediction.Unsupported: the generated answers no
	// evidence backs, which are never scored.
	Unsupported int `json:"unsupported"`
	// Errors counts retriever failures scored as empty (Options.KeepGoing).
	Errors int `json:"errors"`
	// NoGold counts questions left out because they have no gold answer
	// (the peers' metric divides by the gold count).
	NoGold int `json:"no_gold"`
	// Dropped is for the caller to record questions filtered out before
	// the run, such as those benchmark.Answerable drops; Run leaves it 0.
	Dropped int `json:"dropped"`
	// PathExact is the percentage of questions (of PathExactN whose gold
	// path can be followed in the KG) where following the gold relation
	// path reaches gold answers only: an upper bound on what relation-level
	// retrieval can reach on Hits@1 and precision without luck in ties.
	PathExact  float64 `json:"gold_path_exact"`
	PathExactN int     `json:"gold_path_exact_n"`
	Latency    Latency `json:"latency_ms"`
	// LLM is the language-model use of the run, when the answerer asked
	// one (UsageReporter).
	LLM *LLMUse `json:"llm,omitempty"`
	// StageMS summarises Prediction.Stages per stage, over the questions
	// whose retriever timed that stage.
	StageMS map[string]Latency `json:"stage_ms,omitempty"`
	// Slowest names the slowest questions (up to 5), slowest first, with
	// their stage times.
	Slowest []Slow `json:"slowest,omitempty"`
	// ThroughputQPS is the questions answered by this run per second of
	// its wall time; results taken from Options.Done do not count.
	ThroughputQPS float64 `json:"throughput_qps"`
	// Workers is Options.Workers as used (at least 1).
	Workers int `json:"workers"`
	// Resumed counts the results taken from Options.Done.
	Resumed int `json:"resumed,omitempty"`
	// Partial marks a report of a run stopped before every question was
	// answered (cancelled); Pending counts the questions left.
	Partial bool `json:"partial,omitempty"`
	Pending int  `json:"pending,omitempty"`
	// Failures counts the questions with no hit by the stage they are
	// attributed to (Result.Failure, FailureStages); nil when every
	// question was a hit.
	Failures map[string]int `json:"failures,omitempty"`
	// Extras counts the questions whose answers are a superset of the
	// gold set by why (Result.Extra, ExtraClasses); nil when there are
	// none.
	Extras map[string]int `json:"extras,omitempty"`
	// Calibration is how well the answers' confidences rank and measure
	// their correctness, and how many questions were abstained; nil when
	// no question carries a confidence or was abstained.
	Calibration *Calibration `json:"calibration,omitempty"`
	// Unanswerable and Answerable split the run by whether a variant's KG
	// lost the question's answer (Options.Unanswerable): how many of
	// those were abstained, and what the others scored. Both nil without
	// Options.Unanswerable.
	Unanswerable *UnanswerableScores `json:"unanswerable,omitempty"`
	Answerable   *AnswerableScores   `json:"answerable,omitempty"`
	ByAnswers    []Bucket            `json:"by_answers"`
	ByHops       []Bucket            `json:"by_hops"`
	// ByType buckets by the dataset's question type (MetaQA's qtype,
	// the kind of a synth complex question), where it gives one.
	ByType    []Bucket `json:"by_type,omitempty"`
	Questions []Result `json:"questions,omitempty"`
}

// answerBuckets are the paper's Table 2 groups by gold answer count.
var answerBuckets = []struct {
	label    string
	min, max int
}{{"1", 1, 1}, {"2-4", 2, 4}, {"5-9", 5, 9}, {">=10", 10, math.MaxInt}}

// outcome is one question's scored result and its gold-path check, as a
// worker hands it to the collector.
type outcome struct {
	i                 int
	res               Result
	pred              Prediction // for Options.OnAnswer, dropped once handed over
	exact, exactOK    bool
	err               error // fatal: stops the run
	done, interrupted bool
}

// Run plans, retrieves and scores the questions, Options.Workers at a time.
// Latency is the wall time of the retriever's Answer call alone. Questions
// without gold answers are skipped and counted in Report.NoGold.
//
// When ctx is cancelled, Run stops handing out questions, drops the answers
// the cancellation interrupted, and returns the report of the questions
// scored so far (marked Partial) together with an error wrapping ctx.Err().
// Any other failure returns no report.
func Run(ctx context.Context, questions []benchmark.Question, answerer Answerer, opts Options) (*Report, error) {
	if answerer == nil {
		return nil, errors.New("eval.Run: an answerer is required")
	}
	workers := max(opts.Workers, 1)
	done := make(map[string]Result, len(opts.Done))
	for _, r := range opts.Done {
		done[r.ID] = r
	}
	outs := make([]outcome, len(questions))
	var pending []int
	noGold, resumed := 0, 0
	for i, q := range questions {
		outs[i].i = i
		switch r, ok := done[q.ID]; {
		case len(q.Answers) == 0:
			noGold++
		case ok:
			resumed++
			outs[i].res, outs[i].done = r, true
			outs[i].exact, outs[i].exactOK = benchmark.PathExact(graphOf(q, opts.Graph), q)
		default:
			pending = append(pending, i)
		}
	}
	// The bar counts the questions to answer, so that its rate and ETA are
	// not skewed by resumed results.
	var bar *progress.Bar // nil draws nothing
	if opts.Progress != nil {
		bar = progress.New(opts.Progress, "eval", int64(len(pending)))
	}

	var usage0 llm.Usage
	if u, ok := answerer.(UsageReporter); ok {
		usage0 = u.LLMUsage()
	}
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	results := make(chan outcome)
	go func() {
		defer close(jobs)
		for _, i := range pending {
			select {
			case jobs <- i:
			case <-runCtx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, max(len(pending), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Questions run under the caller's ctx, not runCtx: a fatal
			// error stops dispatching new questions, but those already
			// started finish, so every question before the failing one
			// has its own outcome and the earliest error is reported,
			// whatever the number of workers.
			for i := range jobs {
				results <- answerOne(ctx, i, questions[i], answerer, opts)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	var fatal error
	fatalAt, answered := len(questions), 0
	for o := range results {
		switch {
		case o.err != nil:
			// Keep the error of the earliest question, as a one-by-one run
			// would report, and stop the others.
			if o.i < fatalAt {
				fatal, fatalAt = o.err, o.i
			}
			cancel()
		case o.interrupted || fatal != nil:
		default:
			if err := record(opts, questions[o.i], o); err != nil {
				fatal, fatalAt = fmt.Errorf("eval: record question %s: %w", o.res.ID, err), -1
				cancel()
				continue
			}
			o.pred = Prediction{}
			outs[o.i] = o
			answered++
			bar.Add(1)
		}
	}
	wall := time.Since(start)
	bar.Finish()
	if fatal != nil && ctx.Err() == nil {
		return nil, fatal
	}
	rep := aggregate(questions, outs, opts.PerQuestion)
	rep.NoGold, rep.Resumed, rep.Workers = noGold, resumed, workers
	if opts.Unanswerable != nil {
		rep.Unanswerable, rep.Answerable = splitUnanswerable(outs, opts.Unanswerable)
	}
	if s := wall.Seconds(); answered > 0 && s > 0 {
		rep.ThroughputQPS = float64(answered) / s
	}
	if u, ok := answerer.(UsageReporter); ok {
		rep.LLM = llmUse(u.LLMUsage().Minus(usage0), answered)
	}
	if err := ctx.Err(); err != nil {
		rep.Partial, rep.Pending = true, len(pending)-answered
		return rep, fmt.Errorf("eval: stopped with %d of %d questions answered: %w", rep.N, rep.N+rep.Pending, err)
	}
	return rep, nil
}

// record hands o to the Options callbacks.
func record(opts Options, q benchmark.Question, o outcome) error {
	if opts.OnResult != nil {
		if err := opts.OnResult(o.res); err != nil {
			return err
		}
	}
	if opts.OnAnswer != nil {
		return opts.OnAnswer(q, o.pred, o.res)
	}
	return nil
}

// graphOf is the KG q is answered over.
func graphOf(q benchmark.Question, shared *kg.Graph) *kg.Graph {
	if q.Graph != nil {
		return q.Graph
	}
	return shared
}

// answerOne answers and scores question i.
func answerOne(ctx context.Context, i int, q benchmark.Question, answerer Answerer, opts Options) outcome {
	o := outcome{i: i}
	if ctx.Err() != nil {
		o.interrupted = true
		return o
	}
	start := time.Now()
	pred, err := answerer.Answer(ctx, q)
	wall := time.Since(start) - pred.Stages[plan.StageLink] - pred.Stages[plan.StagePlan]
	res := Result{ID: q.ID, Hops: q.Hops, LatencyMS: float64(wall.Nanoseconds()) / 1e6, Coverage: -1}
	if err != nil {
		switch {
		case ctx.Err() != nil:
			o.interrupted = true
			return o
		case !opts.KeepGoing:
			o.err = fmt.Errorf("eval: answer question %s: %w", q.ID, err)
			return o
		}
		res.Err = err.Error()
		pred = Prediction{}
	}
	if pred.Abstained {
		// "No answer" scores as none, whatever the answerer left behind.
		pred.Answers = nil
	}
	res.Score = ScoreAnswers(pred.Answers, q.Answers)
	res.Answers = pred.Answers
	res.Unbacked = pred.Unbacked
	res.Unsupported = pred.Unsupported
	if pred.Calibrated {
		c := pred.Confidence
		res.Confidence = &c
	}
	res.Abstained, res.Abstain = pred.Abstained, pred.Abstain
	if len(pred.Stages) > 0 {
		res.StagesMS = make(map[string]float64, len(pred.Stages))
	}
	for k, d := range pred.Stages {
		res.StagesMS[k] = float64(d.Nanoseconds()) / 1e6
	}
	if res.Hit == 0 {
		res.Failure = Attribute(q, pred.Trace, pred.EvidenceTriples)
	}
	if pred.Trace != nil {
		res.Plans, res.Mentions = pred.Trace.Plans, pred.Trace.Mentions
	}
	g := graphOf(q, opts.Graph)
	if res.Hit == 1 {
		var r kg.Reader
		if g != nil {
			r = kg.Of(g)
		}
		res.Extra = AttributeExtras(q, pred.Trace, pred.EvidenceTriples, pred.Answers, r)
	}
	if c, ok := Coverage(benchmark.GoldTriples(g, q), pred.EvidenceTriples); ok {
		res.Coverage = c
	}
	o.exact, o.exactOK = benchmark.PathExact(g, q)
	o.res, o.done = res, true
	if opts.OnAnswer != nil {
		o.pred = pred
	}
	return o
}

// aggregate sums the done outcomes in question order, so that the figures
// (floating-point sums included) do not depend on the order questions
// finished in.
func aggregate(questions []benchmark.Question, outs []outcome, perQuestion bool) *Report {
	rep := &Report{}
	var all acc
	byAns := make([]acc, len(answerBuckets))
	byHops := map[int]*acc{}
	byType := map[string]*acc{}
	var lat []float64
	stages := map[string][]float64{}
	var results []Result
	for i, q := range questions {
		o := outs[i]
		if !o.done {
			continue
		}
		res := o.res
		results = append(results, res)
		lat = append(lat, res.LatencyMS)
		rep.Slowest = keepSlowest(rep.Slowest, Slow{ID: res.ID, LatencyMS: res.LatencyMS, StagesMS: res.StagesMS})
		for k, ms := range res.StagesMS {
			stages[k] = append(stages[k], ms)
		}
		rep.Unbacked += res.Unbacked
		rep.Unsupported += res.Unsupported
		if res.Err != "" {
			rep.Errors++
		}
		if res.Extra != "" {
			if rep.Extras == nil {
				rep.Extras = map[string]int{}
			}
			rep.Extras[res.Extra]++
		}
		if res.Failure != "" {
			if rep.Failures == nil {
				rep.Failures = map[string]int{}
			}
			rep.Failures[res.Failure]++
		}
		if o.exactOK {
			rep.PathExactN++
			if o.exact {
				rep.PathExact++
			}
		}
		all.add(res)
		for i, b := range answerBuckets {
			if n := len(q.Answers); n >= b.min && n <= b.max {
				byAns[i].add(res)
			}
		}
		h := byHops[q.Hops]
		if h == nil {
			h = &acc{}
			byHops[q.Hops] = h
		}
		h.add(res)
		if q.Type != "" {
			if byType[q.Type] == nil {
				byType[q.Type] = &acc{}
			}
			byType[q.Type].add(res)
		}
		if perQuestion {
			rep.Questions = append(rep.Questions, res)
		}
	}
	rep.Scores = all.scores()
	for i, b := range answerBuckets {
		rep.ByAnswers = append(rep.ByAnswers, Bucket{Label: b.label, Scores: byAns[i].scores()})
	}
	hops := make([]int, 0, len(byHops))
	for h := range byHops {
		hops = append(hops, h)
	}
	slices.Sort(hops)
	for _, h := range hops {
		label := strconv.Itoa(h)
		if h == 0 {
			label = "unknown"
		}
		rep.ByHops = append(rep.ByHops, Bucket{Label: label, Scores: byHops[h].scores()})
	}
	rep.Calibration = calibrate(results)
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		rep.ByType = append(rep.ByType, Bucket{Label: t, Scores: byType[t].scores()})
	}
	rep.Latency = summarise(lat)
	if len(stages) > 0 {
		rep.StageMS = make(map[string]Latency, len(stages))
		for k, ms := range stages {
			rep.StageMS[k] = summarise(ms)
		}
	}
	if rep.PathExactN > 0 {
		rep.PathExact = 100 * rep.PathExact / float64(rep.PathExactN)
	}
	return rep
}

// acc sums per-question figures.
type acc struct {
	n, covN                             int
	hits1, hit, f1, prec, rec, coverage float64
	rr, hitK, answers                   float64
}

func (a *acc) add(r Result) {
	a.n++
	a.hits1 += r.Hits1
	a.hit += r.Hit
	a.f1 += r.F1
	a.prec += r.Precision
	a.rec += r.Recall
	a.rr += r.RR
	a.hitK += r.HitK
	a.answers += float64(r.NumPredictions)
	if r.Coverage >= 0 {
		a.covN++
		a.coverage += r.Coverage
	}
}

func (a *acc) scores() Scores {
	s := Scores{N: a.n, CoverageN: a.covN}
	if a.n > 0 {
		n := float64(a.n)
		s.Hits1, s.Hit, s.F1 = 100*a.hits1/n, 100*a.hit/n, 100*a.f1/n
		s.Precision, s.Recall = 100*a.prec/n, 100*a.rec/n
		s.MRR, s.HitK, s.Answers = 100*a.rr/n, 100*a.hitK/n, a.answers/n
	}
	if a.covN > 0 {
		s.Coverage = 100 * a.coverage / float64(a.covN)
	}
	return s
}

// AverageScores averages per-question scores the way Run does (x100), for
// scoring predictions that did not come from a Retriever, such as a peer's
// released outputs.
func AverageScores(scores []Score) Scores {
	var a acc
	for _, s := range scores {
		a.add(Result{Score: s, Coverage: -1})
	}
	return a.scores()
}

// summarise returns nearest-rank percentiles of ms.
func summarise(ms []float64) Latency {
	if len(ms) == 0 {
		return Latency{}
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	return Latency{P50: rank(0.50), P95: rank(0.95), P99: rank(0.99), Mean: sum / float64(len(s)), Max: s[len(s)-1]}
}

// keepSlowest adds q to the slowest questions so far (slowest first, the
// earlier question first among equals), keeping the slowest few.
func keepSlowest(s []Slow, q Slow) []Slow {
	i := len(s)
	for i > 0 && s[i-1].LatencyMS < q.LatencyMS {
		i--
	}
	if i >= slowest {
		return s
	}
	s = slices.Insert(s, i, q)
	return s[:min(len(s), slowest)]
}

// slowLine formats the slowest questions: "ID 812.3 ms (trace 790.1,
// generate 20.0)", stages by name.
func slowLine(s []Slow) string {
	var b strings.Builder
	for i, q := range s {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %.1f ms", q.ID, q.LatencyMS)
		names := make([]string, 0, len(q.StagesMS))
		for k := range q.StagesMS {
			names = append(names, k)
		}
		slices.Sort(names)
		for j, k := range names {
			if j == 0 {
				b.WriteString(" (")
			} else {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %.1f", k, q.StagesMS[k])
			if j == len(names)-1 {
				b.WriteString(")")
			}
		}
	}
	return b.String()
}

// Label records on r how p answered: its retrieval strategy's Mode and
// its planner, a run planned from the gold relation paths (the oracle)
// marked as the upper bound it is.
func (r *Report) Label(p *plan.Pipeline) {
	r.Mode, r.Planner, r.UpperBound = p.Mode, p.PlannerName, p.PlannerName == "oracle"
	if p.PlannerName != "" {
		r.Beam = p.Beam
	}
}

// PlannerLine says which planner ran, for the head of a report; "" when
// none is recorded.
func (r *Report) PlannerLine() string {
	switch {
	case r.UpperBound:
		return "planner " + r.Planner + ": the gold relation paths as plans, so this measures retrieval alone, an upper bound (not stem's score from the questions; --planner auto plans from them)"
	case r.Planner != "" && r.Beam > 0:
		return fmt.Sprintf("planner %s, beam %d", r.Planner, r.Beam)
	case r.Planner != "":
		return "planner " + r.Planner
	}
	return ""
}

// WriteTable renders the report as an aligned table: one row for all
// questions, then one per answer-count bucket and per hop count, then the
// unbacked, error and latency figures.
func (r *Report) WriteTable(w io.Writer) error {
	if l := r.PlannerLine(); l != "" {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// The rank metrics beside hits@1, then hit and f1 with the list
	// length they grow with (answers/q), as compare's table has them.
	fmt.Fprintf(tw, "slice\tn\thits@1\tmrr\thit@%d\thit\tanswers/q\tf1\tprecision\trecall\tcoverage\tcov n\t\n", HitAtK)
	row := func(label string, s Scores) {
		cov := "-"
		if s.CoverageN > 0 {
			cov = fmt.Sprintf("%.2f", s.Coverage)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%d\t\n",
			label, s.N, s.Hits1, s.MRR, s.HitK, s.Hit, s.Answers, s.F1, s.Precision, s.Recall, cov, s.CoverageN)
	}
	row("all", r.Scores)
	for _, b := range r.ByAnswers {
		if b.N > 0 {
			row("answers "+b.Label, b.Scores)
		}
	}
	for _, b := range r.ByHops {
		row("hops "+b.Label, b.Scores)
	}
	for _, b := range r.ByType {
		row("type "+b.Label, b.Scores)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "unbacked %d  unsupported %d  errors %d  no-gold %d  dropped %d  latency ms p50 %.2f p95 %.2f p99 %.2f mean %.2f max %.2f  throughput %.2f q/s (%d workers)\n",
		r.Unbacked, r.Unsupported, r.Errors, r.NoGold, r.Dropped, r.Latency.P50, r.Latency.P95, r.Latency.P99, r.Latency.Mean, r.Latency.Max, r.ThroughputQPS, r.Workers)
	if err == nil && len(r.Slowest) > 0 {
		_, err = fmt.Fprintf(w, "slowest: %s\n", slowLine(r.Slowest))
	}
	if err == nil && r.LLM != nil {
		u := r.LLM
		_, err = fmt.Fprintf(w, "llm %d calls  %d prompt + %d completion tokens  per question: %.2f calls  %.1f prompt + %.1f completion tokens\n",
			u.Requests, u.PromptTokens, u.CompletionTokens, u.RequestsPerQ, u.PromptTokensPerQ, u.CompletionTokensPerQ)
	}
	if gen, ok := r.StageMS[plan.StageGenerate]; ok && err == nil && r.LLM != nil {
		_, err = fmt.Fprintf(w, "generate stage ms p50 %.2f p95 %.2f mean %.2f max %.2f\n", gen.P50, gen.P95, gen.Mean, gen.Max)
	}
	if err == nil && len(r.Failures) > 0 {
		_, err = fmt.Fprintf(w, "failures by stage: %s\n", r.FailureLine())
	}
	if err == nil && len(r.Extras) > 0 {
		n := 0
		for _, c := range r.Extras {
			n += c
		}
		_, err = fmt.Fprintf(w, "extra answers (%d questions answer their whole gold set and more): %s\n", n, r.ExtraLine())
	}
	if err == nil {
		err = writeCalibration(w, r.Calibration)
	}
	if err == nil {
		err = r.writeUnanswerable(w)
	}
	if err == nil && r.Partial {
		_, err = fmt.Fprintf(w, "partial: stopped with %d questions not answered\n", r.Pending)
	}
	if err != nil || r.PathExactN == 0 {
		return err
	}
	_, err = fmt.Fprintf(w, "gold path reaches gold answers only in %.2f%% of %d questions (the Hits@1 a relation-level method is sure of)\n", r.PathExact, r.PathExactN)
	return err
}

// ExtraLine formats Extras as "off-path N  wrong-type N ...", every class
// in ExtraClasses order, zeros included.
func (r *Report) ExtraLine() string {
	var b strings.Builder
	for i, c := range ExtraClasses {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %d", c, r.Extras[c])
	}
	return b.String()
}

// FailureLine formats Failures as "linking N  planning N ...", every
// class in FailureStages order, zeros included, so that lines of
// different runs line up.
func (r *Report) FailureLine() string {
	var b strings.Builder
	for i, st := range FailureStages {
		if i > 0 {
			b.WriteString("  ")
		}
		fmt.Fprintf(&b, "%s %d", st, r.Failures[st])
	}
	return b.String()
}
