package main

import (
	"fmt"
	"io"

	"github.com/stem-kgqa/stem/models"
	"github.com/stem-kgqa/stem/models/embedcache"
	"github.com/stem-kgqa/stem/models/onnxenc"
	"github.com/stem-kgqa/stem/models/openaiembed"
	"github.com/stem-kgqa/stem/models/wordvec"
	"github.com/urfave/cli/v2"
)

// encoderFlags select and configure the text encoder; every command that
// encodes text takes them.
func encoderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "encoder", Value: "wordvec", Category: "encoder", Usage: "text encoder: wordvec (word vectors, the default), onnx (a local transformer export), openai (a /v1/embeddings server)"},
		&cli.StringFlag{Name: "vectors", Category: "encoder", Usage: "wordvec: vector file (stem's converted format, GloVe text or word2vec binary); default: the wink vectors set up by `stem setup`"},
		&cli.StringFlag{Name: "model-dir", Category: "encoder", Usage: "onnx: directory holding model.onnx and tokenizer.json (BERT, MiniLM, bge family)"},
		&cli.StringFlag{Name: "pooling", Value: "mean", Category: "encoder", Usage: "onnx: mean or cls pooling of the token vectors"},
		&cli.StringFlag{Name: "base-url", Value: "http://localhost:8000/v1", Category: "encoder", Usage: "openai: API root of the embeddings server"},
		&cli.StringFlag{Name: "model", Category: "encoder", Usage: "openai: model name sent with each request"},
		&cli.StringFlag{Name: "api-key-env", Value: "OPENAI_API_KEY", Category: "encoder", Usage: "openai: environment variable that holds the API key"},
		&cli.BoolFlag{Name: "embed-cache", Category: "encoder", Usage: "keep every computed vector in an on-disk cache under the cache directory (worth it for onnx and openai)"},
	}
}

// openEncoder builds the encoder the flags name. close releases the
// on-disk cache when one is used; it is never nil.
func openEncoder(c *cli.Context, log io.Writer) (enc models.Encoder, close func() error, err error) {
	close = func() error { return nil }
	switch c.String("encoder") {
	case "wordvec":
		path := c.String("vectors")
		if path == "" {
			if path, err = wordvec.Setup(c.Context, wordvec.SetupOptions{Log: log}); err != nil {
				return nil, close, err
			}
		}
		v, err := wordvec.Open(path)
		if err != nil {
			return nil, close, err
		}
		enc = wordvec.New(v, wordvec.Options{})
	case "onnx":
		dir := c.String("model-dir")
		if dir == "" {
			return nil, close, fmt.Errorf("--encoder onnx needs --model-dir DIR (a folder with model.onnx and tokenizer.json)")
		}
		var pool onnxenc.Pooling
		switch c.String("pooling") {
		case "mean":
			pool = onnxenc.PoolMean
		case "cls":
			pool = onnxenc.PoolCLS
		default:
			return nil, close, fmt.Errorf("--pooling %q: want mean or cls", c.String("pooling"))
		}
		if enc, err = onnxenc.New(dir, onnxenc.Options{Pooling: pool}); err != nil {
			return nil, close, err
		}
	case "openai":
		if c.String("model") == "" {
			return nil, close, fmt.Errorf("--encoder openai needs --model NAME")
		}
		enc, err = openaiembed.New(c.Context, openaiembed.Config{
			BaseURL:   c.String("base-url"),
			Model:     c.String("model"),
			APIKeyEnv: c.String("api-key-env"),
		})
		if err != nil {
			return nil, close, err
		}
	default:
		return nil, close, fmt.Errorf("--encoder %q: want wordvec, onnx or openai", c.String("encoder"))
	}
	if !c.Bool("embed-cache") {
		return enc, close, nil
	}
	dir, err := wordvec.DefaultCacheDir()
	if err != nil {
		return nil, close, err
	}
	cache, err := embedcache.Open(dir+"/embeddings", enc)
	if err != nil {
		return nil, close, err
	}
	return cache, cache.Close, nil
}
