// Package peers brings the systems STEM is compared with into stem as
// retrieval strategies, run by name beside STEM's own (`--retriever NAME`,
// `stem compare --config retriever=NAME`): each peer lives in a package
// of its own below this one and implements plan.Retriever over the KG
// interface, so it runs over a file or a SPARQL endpoint alike and its
// answers go through the same metrics and faithfulness audit.
package peers

import (
	"context"
	"fmt"

	"github.com/stem-kgqa/stem/models/llm"
	"github.com/stem-kgqa/stem/peers/dog"
	"github.com/stem-kgqa/stem/peers/gcr"
	"github.com/stem-kgqa/stem/peers/graphraft"
	"github.com/stem-kgqa/stem/peers/simgrag"
	"github.com/stem-kgqa/stem/plan"
)

// Retrievers returns the registry of every retrieval strategy stem ships:
// STEM's (plan.DefaultRetrievers) and the peers', each configured from
// plan.Env.Peers (0 keeps its paper's value).
func Retrievers() *plan.Registry {
	r := plan.DefaultRetrievers()
	// Registering fixed, distinct names cannot fail.
	_ = r.Register("simgrag", "SimGRAG: top-k KG subgraphs isomorphic to the schema graph by graph semantic distance (k=3, k(n)=k(r)=16)",
		func(ctx context.Context, env plan.Env) (plan.Retriever, error) {
			cfg := simgragConfig(env.Peers)
			if env.Peers.SimGRAGLLM {
				c, err := llmClient(env, "simgrag", "--simgrag-llm")
				if err != nil {
					return nil, err
				}
				cfg.Chat = c
			}
			return simgrag.New(ctx, env, cfg)
		})
	_ = r.Register("gcr", "GCR: KG-Trie of relation paths (L=2), graph-constrained beam decoding of K=10 paths scored by encoder and plan, answers by vote (or --gcr-llm: the LLM's log-probabilities, then its inductive reasoning)",
		func(ctx context.Context, env plan.Env) (plan.Retriever, error) {
			cfg := gcrConfig(env.Peers)
			if env.Peers.GCRLLM {
				c, err := llmClient(env, "gcr", "--gcr-llm")
				if err != nil {
					return nil, err
				}
				cfg.Scorer, cfg.LLM, cfg.Reason = gcr.ScorerLLM, c, c
			}
			return gcr.New(ctx, env, cfg)
		})
	_ = r.Register("graphraft", "GraphRAFT: every grounded 1-hop, 2-hop and between-entity query template instance around the question entities, the best chosen by encoder cosine and the planner's candidate paths (or --graphraft-llm: by the LLM among the 20 best, as numbered Cypher queries), executed; answers are its results",
		func(ctx context.Context, env plan.Env) (plan.Retriever, error) {
			cfg := graphraftConfig(env.Peers)
			if env.Peers.GraphRAFTLLM {
				c, err := llmClient(env, "graphraft", "--graphraft-llm")
				if err != nil {
					return nil, err
				}
				cfg.Chat = c
			}
			return graphraft.New(ctx, env, cfg)
		})
	_ = r.Register("dog", "DoG: well-formed triple chains from the question entities, graph-constrained triple by triple, beam bs=2 up to T=3 triples, each chain stopping when no continuation scores better (encoder and plan; or --dog-llm: the LLM's log-probabilities of the next triple and of concluding)",
		func(ctx context.Context, env plan.Env) (plan.Retriever, error) {
			cfg := dogConfig(env.Peers)
			if env.Peers.DoGLLM {
				c, err := llmClient(env, "dog", "--dog-llm")
				if err != nil {
					return nil, err
				}
				cfg.Scorer, cfg.LLM = dog.ScorerLLM, c
			}
			return dog.New(ctx, env, cfg)
		})
	return r
}

// llmClient opens the pipeline's LLM client for a strategy's LLM mode.
func llmClient(env plan.Env, strategy, flag string) (*llm.Client, error) {
	if env.Chat == nil {
		return nil, fmt.Errorf("%s: %s needs an LLM client (--llm-model)", strategy, flag)
	}
	c, err := env.Chat()
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", strategy, flag, err)
	}
	return c, nil
}

func simgragConfig(p plan.PeerSettings) simgrag.Config {
	c := simgrag.DefaultConfig()
	set(&c.K, p.SimGRAGK)
	set(&c.KNodes, p.SimGRAGNodes)
	set(&c.KRelations, p.SimGRAGRelations)
	return c
}

func gcrConfig(p plan.PeerSettings) gcr.Config {
	c := gcr.DefaultConfig()
	set(&c.Hops, p.GCRHops)
	set(&c.Beam, p.GCRBeam)
	return c
}

func graphraftConfig(p plan.PeerSettings) graphraft.Config {
	c := graphraft.DefaultConfig()
	set(&c.Queries, p.GraphRAFTQueries)
	set(&c.Choices, p.GraphRAFTChoices)
	set(&c.Hops, p.GraphRAFTHops)
	return c
}

func dogConfig(p plan.PeerSettings) dog.Config {
	c := dog.DefaultConfig()
	set(&c.Beam, p.DoGBeam)
	set(&c.Depth, p.DoGDepth)
	return c
}

// set overrides a default with a setting that is not 0.
func set(field *int, v int) {
	if v != 0 {
		*field = v
	}
}
