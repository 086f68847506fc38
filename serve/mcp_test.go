package serve

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stem-kgqa/stem/plan"
)

// bearer adds a token to every request, as an MCP client configured with
// a header does.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCP drives the tools with the SDK's own client, over streamable
// HTTP on the running server (with a token) and over an in-process pipe,
// the transport stdio uses.
func TestMCP(t *testing.T) {
	ctx := context.Background()
	st := start(t, demoBackend(t, nil), Options{Token: "s3cret"})
	transports := map[string]func(t *testing.T) mcp.Transport{
		"streamable HTTP": func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: st.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"s3cret"}}, MaxRetries: -1}
		},
		"pipe": func(t *testing.T) mcp.Transport {
			server, client := mcp.NewInMemoryTransports()
			ss, err := st.MCP().Connect(ctx, server, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ss.Close() })
			return client
		},
	}
	for name, transport := range transports {
		t.Run(name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v1"}, nil)
			cs, err := client.Connect(ctx, transport(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			var names []string
			for tool, err := range cs.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			if want := []string{"ask", "explain", "neighbours", "search_entities"}; !slices.Equal(names, want) {
				t.Errorf("tools %v, want %v", names, want)
			}
			call := func(tool string, args map[string]any) (*mcp.CallToolResult, string) {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				var text strings.Builder
				for _, c := range res.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						text.WriteString(tc.Text)
					}
				}
				return res, text.String()
			}

			res, text := call("ask", map[string]any{"question": "in which country was the director of inception born ?"})
			if res.IsError || !strings.Contains(text, "1. United_Kingdom") || !strings.Contains(text, "Inception -> directed_by -> Christopher_Nolan") {
				t.Errorf("ask: error %v, text:\n%s", res.IsError, text)
			}
			var v plan.View
			if err := remarshal(res.StructuredContent, &v); err != nil {
				t.Fatal(err)
			}
			if len(v.Answers) != 1 || v.Answers[0].Name != "United_Kingdom" || v.Audit.Unbacked != 0 || v.Explain != nil {
				t.Errorf("ask structured: %+v", v)
			}

			res, text = call("explain", map[string]any{"question": "who directed inception ?"})
			if err := remarshal(res.StructuredContent, &v); err != nil {
				t.Fatal(err)
			}
			if res.IsError || v.Explain == nil || len(v.Explain.Matched) == 0 || !strings.Contains(text, "T ") {
				t.Errorf("explain: %+v\n%s", v.Explain, text)
			}

			res, _ = call("search_entities", map[string]any{"query": "christopher nolan", "k": 3})
			var sv SearchView
			if err := remarshal(res.StructuredContent, &sv); err != nil {
				t.Fatal(err)
			}
			if len(sv.Entities) != 3 || sv.Entities[0].Name != "Christopher_Nolan" {
				t.Errorf("search_entities: %+v", sv)
			}

			res, _ = call("neighbours", map[string]any{"entity": "Christopher_Nolan", "limit": 4})
			var nv NeighboursView
			if err := remarshal(res.StructuredContent, &nv); err != nil {
				t.Fatal(err)
			}
			if nv.Entity != "Christopher_Nolan" || len(nv.Triples) != 4 || !nv.Truncated {
				t.Errorf("neighbours: %+v", nv)
			}

			// Bad calls are tool errors the agent reads, not broken sessions.
			for _, tc := range []struct {
				tool string
				args map[string]any
				want string
			}{
				{"ask", map[string]any{}, `missing properties: ["question"]`},
				{"ask", map[string]any{"question": "what is the meaning of life ?"}, "names no entity"},
				{"ask", map[string]any{"question": "who directed it ?", "entities": []string{"Nowhere"}}, "Nowhere"},
				{"ask", map[string]any{"question": "who directed inception ?", "planner": "oracle"}, "not served here"},
				{"neighbours", map[string]any{"entity": "Nowhere"}, "Nowhere"},
				{"neighbours", map[string]any{"entity": "Inception", "limit": -3}, "limit=-3"},
				{"search_entities", map[string]any{"query": "x", "k": 1000}, "k=1000"},
			} {
				res, text := call(tc.tool, tc.args)
				if !res.IsError || !strings.Contains(text, tc.want) {
					t.Errorf("%s %v: error %v, text %q, want it to say %q", tc.tool, tc.args, res.IsError, text, tc.want)
				}
			}
		})
	}
}

// remarshal decodes an MCP structured result into v.
func remarshal(from any, v any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
