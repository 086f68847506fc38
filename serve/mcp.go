package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SearchRequest is the argument of the MCP search_entities tool.
type SearchRequest struct {
	Query string `json:"query" jsonschema:"free text naming an entity, e.g. tom hanks"`
	K     int    `json:"k,omitempty" jsonschema:"how many entities to return (1-100, default 10)"`
}

// NeighboursRequest is the argument of the MCP neighbours tool.
type NeighboursRequest struct {
	Entity string `json:"entity" jsonschema:"the entity's KG name (as search_entities returns it)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most triples to return (1-10000, default 100)"`
}

// mcpChains is how many chains per answer an agent reads as text; the
// structured result holds them all.
const mcpChains = 5

// newMCP builds the MCP server: the same answers as the HTTP API, with a
// readable text for the agent beside the structured result.
func (s *Server) newMCP() *mcp.Server {
	m := mcp.NewServer(&mcp.Implementation{Name: "stem", Title: "stem: faithful KG question answering", Version: s.opt.Version},
		&mcp.ServerOptions{Instructions: "Answer questions from a knowledge graph with the KG triples behind every answer. " +
			"Use search_entities to find an entity's exact name, neighbours to read its triples, " +
			"ask for answers with their evidence chains, explain for the whole trace."})
	ask := func(explain bool) mcp.ToolHandlerFor[AskRequest, any] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in AskRequest) (*mcp.CallToolResult, any, error) {
			in.Explain = in.Explain || explain
			if left := s.remaining(ctx); left <= 0 {
				// A batch's earlier calls spent its budget: this one is
				// not answered only to be refused.
				return nil, nil, errReplyTooLarge(0, left, s.opt.MaxReply, hintBatch)
			}
			res, v, err := s.answer(ctx, in)
			if err != nil {
				return nil, nil, err
			}
			var text strings.Builder
			res.WriteText(&text, in.Explain, mcpChains, 0)
			out, err := json.Marshal(v)
			if err != nil {
				return nil, nil, fmt.Errorf("encode the answer to %q: %w", in.Question, err)
			}
			// The reply holds the text and the structured result: it is
			// refused here, before the SDK copies it, when over what is
			// left of the request's reply budget.
			if size, left := text.Len()+len(out), s.remaining(ctx); size > left {
				return nil, nil, errReplyTooLarge(size, left, s.opt.MaxReply, hintAsk)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text.String()}}}, json.RawMessage(out), nil
		}
	}
	mcp.AddTool(m, &mcp.Tool{Name: "ask", Title: "Ask the KG",
		Description: "Answer a question from the knowledge graph. Every answer comes with the reasoning chains of KG triples that support it, and an audit counting answers no triple backs (always 0 for structural answers)."},
		ask(false))
	mcp.AddTool(m, &mcp.Tool{Name: "explain", Title: "Explain an answer",
		Description: "Answer a question and show the whole trace: the linked entities, the candidate schema graphs and strategy, the anchors, and every matched KG triple with its T-Score."},
		ask(true))
	mcp.AddTool(m, &mcp.Tool{Name: "search_entities", Title: "Search entities",
		Description: "Find the KG entities whose names are nearest to a free-text query, best first, to name them exactly in ask or neighbours."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SearchRequest) (*mcp.CallToolResult, SearchView, error) {
			v, err := s.searchEntities(ctx, in.Query, in.K)
			return nil, v, err
		})
	mcp.AddTool(m, &mcp.Tool{Name: "neighbours", Title: "Read an entity's triples",
		Description: "List the KG triples (head, relation, tail) an entity takes part in, outgoing first, up to a limit."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in NeighboursRequest) (*mcp.CallToolResult, NeighboursView, error) {
			v, err := s.neighboursOf(ctx, in.Entity, in.Limit)
			return nil, v, err
		})
	return m
}
