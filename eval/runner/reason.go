package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stem-kgqa/stem/atomicfile"
	"github.com/stem-kgqa/stem/eval/rogfile"
	"github.com/stem-kgqa/stem/models/catalog"
)

// ReasonOptions are stem reason's own settings, beside the chat server's.
type ReasonOptions struct {
	Out       string `flag:"out" placeholder:"FILE" usage:"predictions.jsonl FILE to write (RoG's rows: id, question, prediction, ground_truth, input)"`
	Resume    bool   `flag:"resume" usage:"keep the rows FILE holds and ask only the questions it lacks"`
	Workers   int    `flag:"workers" min:"1" max:"256" usage:"questions asked at once"`
	MaxTokens int    `flag:"max-tokens" min:"0" usage:"longest answer, in tokens (0 = the server's limit)"`
	JSON      bool   `flag:"json" usage:"print the scores as one JSON object"`
	// In is the retrieval-only export to answer (the command's argument).
	In string
	// Force replaces Out (the command's --force).
	Force bool
}

// DefaultReasonOptions are stem reason's defaults.
func DefaultReasonOptions() ReasonOptions { return ReasonOptions{Workers: 4} }

// Reason runs stem reason: it answers the rows of the retrieval-only
// export o.In with the chat server chatS names (rogfile.Reason), writes
// them to o.Out (continuing it with o.Resume, replacing it with
// o.Force), and prints the file's scores to w; progress and usage go to
// log.
func Reason(ctx context.Context, w, log io.Writer, o ReasonOptions, chatS catalog.ChatSettings) error {
	in, force := o.In, o.Force
	if o.Out == "" {
		return fmt.Errorf("reason: give --out FILE, the predictions.jsonl to write")
	}
	if force && o.Resume {
		return fmt.Errorf("reason: --force replaces --out and --resume continues it: give one")
	}
	if err := atomicfile.CheckOutput("--out", o.Out, force || o.Resume, in); err != nil {
		return err
	}
	rows, err := rogfile.LoadRows(ctx, in)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	if o.Resume {
		prior, err := rogfile.LoadRows(ctx, o.Out)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--resume: %w", err)
		}
		for _, r := range prior {
			done[r.ID] = true
		}
		fmt.Fprintf(log, "resume: %d of %d questions answered in %s\n", len(done), len(rows), o.Out)
	} else if force {
		if err := os.Remove(o.Out); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("--force: %w", err)
		}
	}
	chat, err := catalog.OpenChat(chatS)
	if err != nil {
		return err
	}
	defer chat.Close()
	out, err := rogfile.Create(o.Out, o.Resume)
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	n, err := rogfile.Reason(ctx, rows, chat, out, rogfile.ReasonOptions{Workers: o.Workers, MaxTokens: o.MaxTokens, Done: done, Progress: log})
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w (%d answers written to %s; --resume continues)", err, n, o.Out)
	}
	u := chat.Usage()
	fmt.Fprintf(log, "%s: %d answers; %d requests, %d prompt + %d completion tokens\n", o.Out, n, u.Requests, u.PromptTokens, u.CompletionTokens)
	sc, err := rogfile.ScoreFile(ctx, o.Out)
	if err != nil {
		return err
	}
	if o.JSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sc)
	}
	_, err = fmt.Fprintf(w, "n %d  hits@1 %.2f  hit %.2f  f1 %.2f  precision %.2f  recall %.2f  no-gold %d\n",
		sc.N, sc.Hits1, sc.Hit, sc.F1, sc.Precision, sc.Recall, sc.NoGold)
	return err
}
