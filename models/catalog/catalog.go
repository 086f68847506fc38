// Package catalog opens the text encoders and chat clients stem can use
// from their settings: the one place that knows every implementation of
// models.Encoder and where the on-disk caches live, so that commands and
// servers open models the same way.
package catalog

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/embedcache"
	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/models/openaiembed"
	"github.com/stem-kgqa/stem/models/wordnet"
	"github.com/stem-kgqa/stem/models/wordvec"
)

// Encoder names an encoder implementation.
type Encoder string

// The encoders.
const (
	WordVec Encoder = "wordvec"
	ONNX    Encoder = "onnx"
	OpenAI  Encoder = "openai"
)

// UnmarshalText accepts wordvec, onnx or openai.
func (e *Encoder) UnmarshalText(b []byte) error {
	switch v := Encoder(b); v {
	case WordVec, ONNX, OpenAI:
		*e = v
		return nil
	}
	return fmt.Errorf("want wordvec, onnx or openai")
}

// Pooling is how an ONNX encoder pools token vectors.
type Pooling string

// UnmarshalText accepts mean or cls.
func (p *Pooling) UnmarshalText(b []byte) error {
	switch v := Pooling(b); v {
	case "mean", "cls":
		*p = v
		return nil
	}
	return fmt.Errorf("want mean or cls")
}

// EncoderSettings select and configure the text encoder.
type EncoderSettings struct {
	Encoder   Encoder `flag:"encoder" category:"encoder" usage:"text encoder: wordvec (word vectors, the default), onnx (a local transformer export), openai (a /v1/embeddings server)"`
	Vectors   string  `flag:"vectors" placeholder:"FILE" category:"encoder" usage:"wordvec: vector FILE (stem's converted format, GloVe text or word2vec binary); default: the wink vectors set up by 'stem setup'"`
	ModelDir  string  `flag:"model-dir" placeholder:"DIR" category:"encoder" usage:"onnx: DIR holding model.onnx and tokenizer.json (BERT, MiniLM, bge family)"`
	Pooling   Pooling `flag:"pooling" category:"encoder" usage:"onnx: mean or cls pooling of the token vectors"`
	BaseURL   string  `flag:"base-url" placeholder:"URL" category:"encoder" usage:"openai: API root URL of the embeddings server"`
	Model     string  `flag:"model" placeholder:"NAME" category:"encoder" usage:"openai: model NAME sent with each request"`
	APIKeyEnv string  `flag:"api-key-env" category:"encoder" usage:"openai: environment variable that holds the API key"`
	Cache     bool    `flag:"embed-cache" category:"encoder" usage:"keep every computed vector in an on-disk cache under the cache directory (worth it for onnx and openai)"`
	// EntityIndex sits with the encoder because every command that opens
	// an encoder over a KG file builds the entity index with it.
	// It is kgvec.Kind's text: catalog sits below kgvec (a seam below the
	// stages), so it holds the name and Check knows the kinds.
	EntityIndex string `flag:"entity-index" category:"encoder" usage:"entity index over a KG file: exact, ivf or hnsw (approximate, for millions of entities; hnsw is faster to search, slower to build) or auto (hnsw from 200,000 entities)"`
	// VectorStore, when set, keeps the entity vectors in a Qdrant server
	// rather than in the cache directory (kgvec.OpenQdrant).
	VectorStore string `flag:"vector-store" placeholder:"URL" category:"encoder" usage:"keep the KG's entity vectors in a Qdrant server, qdrant://HOST:PORT[?api-key-env=VAR&tls=1] (see docs/large-kgs.md), shared by every process; default: a file in the cache directory"`
	// Lexicon sits with the encoder: both read words, and the zero-shot
	// planners take the two together.
	Lexicon string `flag:"lexicon" placeholder:"wordnet|none|FILE" category:"encoder" usage:"lexicon the zero-shot planners read relation words with: wordnet (WordNet 3.1's nouns, set up by 'stem setup' or on first use), none, or a FILE converted by stem"`
}

// DefaultEncoderSettings returns the default: the wink word vectors.
func DefaultEncoderSettings() EncoderSettings {
	return EncoderSettings{Encoder: WordVec, Pooling: "mean", EntityIndex: "auto", BaseURL: "http://localhost:8000/v1", APIKeyEnv: "OPENAI_API_KEY", Lexicon: "wordnet"}
}

// Check reports settings that cannot work, before anything is opened.
func (s EncoderSettings) Check() error {
	switch s.EntityIndex {
	case "", "auto", "exact", "ivf", "hnsw":
	default:
		return fmt.Errorf("--entity-index %q: want auto, exact, ivf or hnsw", s.EntityIndex)
	}
	switch s.Encoder {
	case ONNX:
		if s.ModelDir == "" {
			return fmt.Errorf("--encoder onnx needs --model-dir DIR (a folder with model.onnx and tokenizer.json)")
		}
		if !haveONNX {
			return errNoONNX
		}
	case OpenAI:
		if s.Model == "" {
			return fmt.Errorf("--encoder openai needs --model NAME")
		}
	}
	return nil
}

// OpenLexicon opens the lexicon s names: nil for "none". The default
// WordNet lexicon is set up on first use, with status lines on log; when
// that cannot be done (no npm, no network) the planners do without it, and
// log says so, since a lexicon sharpens planning but is not needed for it.
// A FILE that does not open is an error.
func OpenLexicon(ctx context.Context, s EncoderSettings, log io.Writer) (models.Lexicon, error) {
	switch s.Lexicon {
	case "none":
		return nil, nil
	case "", "wordnet":
		dir, err := wordvec.DefaultCacheDir()
		var cached *wordnet.Lexicon
		if err == nil {
			s.Lexicon, cached, err = wordnet.SetupLexicon(ctx, wordnet.SetupOptions{CacheDir: dir, Log: log})
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if log != nil {
				fmt.Fprintf(log, "warning: planning without the WordNet lexicon (%v); run `stem setup`, or pass --lexicon none to silence this\n", err)
			}
			return nil, nil
		}
		if cached != nil {
			return cached, nil // opened by the setup's check: not decoded twice
		}
	}
	l, err := wordnet.Open(s.Lexicon)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return l, nil
}

// OpenEncoder opens the encoder s names; the default word vectors are set
// up on first use, with progress on log. close releases the on-disk cache
// when one is used; it is never nil.
func OpenEncoder(ctx context.Context, s EncoderSettings, log io.Writer) (enc models.Encoder, close func() error, err error) {
	close = func() error { return nil }
	if err := s.Check(); err != nil {
		return nil, close, err
	}
	switch s.Encoder {
	case WordVec, "":
		path := s.Vectors
		if path == "" {
			if path, err = wordvec.Setup(ctx, wordvec.SetupOptions{Log: log}); err != nil {
				return nil, close, err
			}
		}
		v, err := wordvec.Open(path)
		if err != nil {
			return nil, close, err
		}
		enc = wordvec.New(v, wordvec.Options{})
	case ONNX:
		if enc, err = openONNX(s); err != nil {
			return nil, close, err
		}
	case OpenAI:
		if enc, err = openaiembed.New(ctx, openaiembed.Config{BaseURL: s.BaseURL, Model: s.Model, APIKeyEnv: s.APIKeyEnv}); err != nil {
			return nil, close, err
		}
	}
	if !s.Cache {
		return enc, close, nil
	}
	dir, err := wordvec.DefaultCacheDir()
	if err != nil {
		return nil, close, err
	}
	cache, err := embedcache.Open(filepath.Join(dir, "embeddings"), enc)
	if err != nil {
		return nil, close, err
	}
	return cache, cache.Close, nil
}

// ChatSettings describe the OpenAI-compatible chat server every LLM stage
// talks to.
type ChatSettings struct {
	BaseURL   string        `flag:"llm-base-url" placeholder:"URL" category:"llm" usage:"llm: API root URL of an OpenAI-compatible chat server (vLLM, llama.cpp, Ollama, OpenAI)"`
	Model     string        `flag:"llm-model" placeholder:"NAME" category:"llm" usage:"llm: model NAME"`
	APIKeyEnv string        `flag:"llm-api-key-env" category:"llm" usage:"llm: environment variable holding the API key"`
	Timeout   time.Duration `flag:"llm-timeout" category:"llm" usage:"llm: time limit of one request"`
	NoCache   bool          `flag:"llm-no-cache" category:"llm" usage:"llm: do not keep replies in the on-disk cache (the cache makes reruns repeatable and free)"`
}

// DefaultChatSettings returns a local server's defaults.
func DefaultChatSettings() ChatSettings {
	return ChatSettings{BaseURL: "http://localhost:8000/v1", APIKeyEnv: "OPENAI_API_KEY", Timeout: 60 * time.Second}
}

// OpenChat builds the chat client s describes.
func OpenChat(s ChatSettings) (*llm.Client, error) {
	if s.Model == "" {
		return nil, fmt.Errorf("an LLM stage needs --llm-model NAME (and --llm-base-url of an OpenAI-compatible server)")
	}
	cfg := llm.Config{BaseURL: s.BaseURL, Model: s.Model, APIKeyEnv: s.APIKeyEnv, Timeout: s.Timeout}
	if !s.NoCache {
		dir, err := wordvec.DefaultCacheDir()
		if err != nil {
			return nil, err
		}
		cfg.CacheDir = filepath.Join(dir, "llm")
	}
	return llm.New(cfg)
}
