//go:build gomlx

package onnxenc

import (
	"encoding/json"
	"fmt"

	"github.com/gomlx/go-huggingface/tokenizers/api"
	"github.com/gomlx/go-huggingface/tokenizers/hftokenizer"
)

// defaultMaxLen is the token budget used when neither Options.MaxLen nor the
// tokenizer.json truncation section sets one: sentence-transformers models
// are trained at 128 (all-MiniLM-L6-v2) to 512 (bge), and short KG texts
// rarely need more.
const defaultMaxLen = 128

// tokenizer wraps go-huggingface's pure-Go reader of tokenizer.json and adds
// the one thing it leaves out, truncation. It is read-only after
// construction, so it is safe for concurrent use.
type tokenizer struct {
	hf     *hftokenizer.Tokenizer
	maxLen int
	padID  int
	// minLen is the number of special tokens the post-processor adds: the
	// length of the encoding of "".
	minLen int
}

// tokenizerFile holds the parts of tokenizer.json that hftokenizer ignores
// or that New checks before trusting the file.
type tokenizerFile struct {
	Truncation *struct {
		MaxLength int `json:"max_length"`
	} `json:"truncation"`
	Model struct {
		Type  string         `json:"type"`
		Vocab map[string]int `json:"vocab"`
	} `json:"model"`
}

// newTokenizer parses the contents of a tokenizer.json; path is used only in
// error messages. maxLen <= 0 selects the file's truncation length or
// defaultMaxLen.
func newTokenizer(path string, content []byte, maxLen int) (*tokenizer, error) {
	var tf tokenizerFile
	if err := json.Unmarshal(content, &tf); err != nil {
		return nil, fmt.Errorf("onnxenc: parse %s: %w", path, err)
	}
	if len(tf.Model.Vocab) == 0 {
		return nil, fmt.Errorf("onnxenc: %s: model.vocab is empty or missing", path)
	}
	hf, err := hftokenizer.NewFromContent(nil, content)
	if err != nil {
		return nil, fmt.Errorf("onnxenc: parse %s: %w", path, err)
	}
	if maxLen <= 0 {
		maxLen = defaultMaxLen
		if tf.Truncation != nil && tf.Truncation.MaxLength > 0 {
			maxLen = tf.Truncation.MaxLength
		}
	}
	// Options are set once here, never again: With is not synchronised.
	if err := hf.With(api.EncodeOptions{AddSpecialTokens: true, IncludeSpecialTokensMask: true}); err != nil {
		return nil, fmt.Errorf("onnxenc: configure tokenizer %s: %w", path, err)
	}
	t := &tokenizer{hf: hf, maxLen: maxLen}
	if id, err := hf.SpecialTokenID(api.TokPad); err == nil {
		t.padID = id
	}
	t.minLen = len(hf.Encode(""))
	if maxLen <= t.minLen {
		return nil, fmt.Errorf("onnxenc: MaxLen %d leaves no room for text: %s adds %d special tokens", maxLen, path, t.minLen)
	}
	return t, nil
}

// encode returns the token ids of text, special tokens included, cut to at
// most maxLen tokens. As in HuggingFace's tokenizers, truncation drops text
// tokens from the end and keeps the special tokens the post-processor puts
// around them (for BERT, [CLS] ... [SEP]).
func (t *tokenizer) encode(text string) []int {
	enc := t.hf.EncodeWithAnnotations(text)
	ids := enc.IDs
	if len(ids) <= t.maxLen {
		return ids
	}
	// The special-tokens mask tells the post-processor's tokens apart from
	// the text's (a literal "[SEP]" typed in the text counts as text).
	mask := enc.SpecialTokensMask
	if len(mask) != len(ids) {
		return ids[:t.maxLen]
	}
	prefix := 0
	for prefix < len(ids) && mask[prefix] == 1 {
		prefix++
	}
	suffix := 0
	for suffix < len(ids)-prefix && mask[len(ids)-1-suffix] == 1 {
		suffix++
	}
	keep := t.maxLen - prefix - suffix
	if keep < 0 {
		return ids[:t.maxLen]
	}
	out := make([]int, 0, t.maxLen)
	out = append(out, ids[:prefix+keep]...)
	return append(out, ids[len(ids)-suffix:]...)
}
