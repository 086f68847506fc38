package sparql

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stem-kgqa/stem/internal/retry"
)

// ErrTruncated is returned when an endpoint sent fewer rows than it said a
// query has: engines cut results at a configured maximum without an error
// (Virtuoso's ResultSetMaxRows is 10,000 by default), and a cut answer
// would silently lose edges.
var ErrTruncated = errors.New("result truncated by the endpoint")

// ErrRejected is returned when the endpoint refused a query (a 4xx
// status): its syntax, or an extension the engine lacks.
var ErrRejected = errors.New("the server refused the query")

// Term is one RDF term of a result row.
type Term struct {
	// Type is "uri", "literal" or "bnode" ("typed-literal" from engines
	// that follow the older SPARQL 1.0 JSON note, as Virtuoso does).
	Type  string `json:"type"`
	Value string `json:"value"`
	Lang  string `json:"xml:lang,omitempty"`
	// Datatype is a literal's datatype IRI, if the engine gave one: a
	// typed literal ("2010-07-08"^^xsd:date) is another term than the
	// plain string, and is asked for again as written.
	Datatype string `json:"datatype,omitempty"`
}

// Results are the rows of a SELECT query: one map per row, from variable
// name to its term; a variable left unbound is absent from its row.
type Results struct {
	Vars []string
	Rows []map[string]Term
}

// ParseResults reads the SPARQL 1.1 Query Results JSON Format. It rejects
// what is not that format (an HTML error page, an ASK result, a cut
// document) with an error that says what it saw.
func ParseResults(data []byte) (*Results, error) {
	var doc struct {
		Head *struct {
			Vars []string `json:"vars"`
		} `json:"head"`
		Results *struct {
			Bindings []map[string]Term `json:"bindings"`
		} `json:"results"`
		Boolean *bool `json:"boolean"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not SPARQL JSON results (%v): %s", err, snippet(data))
	}
	if doc.Results == nil {
		if doc.Boolean != nil {
			return nil, errors.New("an ASK result where SELECT rows were expected")
		}
		return nil, fmt.Errorf("no \"results\" member: %s", snippet(data))
	}
	r := &Results{Rows: doc.Results.Bindings}
	if doc.Head != nil {
		r.Vars = doc.Head.Vars
	}
	for i, row := range r.Rows {
		for v, t := range row {
			switch t.Type {
			case "uri", "literal", "bnode", "typed-literal":
			default:
				return nil, fmt.Errorf("row %d: variable %s has term type %q", i, v, t.Type)
			}
		}
	}
	return r, nil
}

// snippet is the start of a reply body, on one line, for an error message.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b[:min(len(b), 2000)])), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", s)
}

// client sends SPARQL 1.1 protocol queries (POST, form-encoded) with a
// per-query timeout and retries with backoff on 5xx replies and
// connection errors. A 4xx or a 501 means the query itself was refused:
// it is never retried, and the server's message is shown. An endpoint
// that refuses POST (405 or 501, as Python's http.server and some proxies
// do) is asked by GET from then on, which the protocol also allows.
type client struct {
	endpoint string
	graph    string // default-graph-uri, when set
	http     *http.Client
	timeout  time.Duration
	retries  int
	backoff  retry.Backoff
	queries  atomic.Int64  // requests that got an answer, for reports
	get      atomic.Bool   // the endpoint refused POST: send queries by GET
	slots    chan struct{} // one per query in flight (Config.Concurrency)
	trace    func(query string, rows int, took time.Duration)
}

// maxBody bounds the bytes read of one reply; pages are far smaller.
const maxBody = 256 << 20

// Select runs a SELECT query and returns its rows.
func (c *client) Select(ctx context.Context, query string) (*Results, error) {
	if c.trace != nil {
		start := time.Now()
		r, err := retry.Do(ctx, c.retries, c.backoff, func() (*Results, time.Duration, error) { return c.attempt(ctx, query) })
		n := 0
		if r != nil {
			n = len(r.Rows)
		}
		c.trace(query, n, time.Since(start))
		return r, err
	}
	return retry.Do(ctx, c.retries, c.backoff, func() (*Results, time.Duration, error) { return c.attempt(ctx, query) })
}

func (c *client) attempt(ctx context.Context, query string) (*Results, time.Duration, error) {
	if c.slots != nil {
		select {
		case c.slots <- struct{}{}:
			defer func() { <-c.slots }()
		case <-ctx.Done():
			return nil, -1, fmt.Errorf("sparql: query %s: %w", c.endpoint, ctx.Err())
		}
	}
	get := c.get.Load()
	r, wait, err := c.send(ctx, query, get)
	var refused *methodRefused
	if !errors.As(err, &refused) {
		return r, wait, err
	}
	if get {
		return nil, -1, retry.Permanent(fmt.Errorf("sparql: query %s: %s to a GET query, having refused POST: is this a SPARQL endpoint?", c.endpoint, refused.status))
	}
	c.get.Store(true)
	post := refused.status
	if r, wait, err = c.send(ctx, query, true); errors.As(err, &refused) {
		err = retry.Permanent(fmt.Errorf("sparql: query %s: %s to POST and %s to GET: is this a SPARQL endpoint?", c.endpoint, post, refused.status))
	}
	return r, wait, err
}

// methodRefused is an endpoint's 405 or 501 to the method a query was
// sent by: refused by POST, it is sent again by GET.
type methodRefused struct{ status string }

func (e *methodRefused) Error() string { return "the endpoint refused the method: " + e.status }

// send sends one query by POST or, with get, by GET.
func (c *client) send(ctx context.Context, query string, get bool) (*Results, time.Duration, error) {
	where := "sparql: query " + c.endpoint
	form := url.Values{"query": {query}}
	if c.graph != "" {
		form.Set("default-graph-uri", c.graph)
	}
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var req *http.Request
	var err error
	if get {
		u := c.endpoint
		if strings.Contains(u, "?") {
			u += "&" + form.Encode()
		} else {
			u += "?" + form.Encode()
		}
		req, err = http.NewRequestWithContext(actx, http.MethodGet, u, nil)
	} else {
		req, err = http.NewRequestWithContext(actx, http.MethodPost, c.endpoint, strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %w", where, err))
	}
	req.Header.Set("Accept", "application/sparql-results+json")
	res, err := c.http.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, -1, fmt.Errorf("%s: %w", where, ctx.Err())
		case actx.Err() != nil:
			return nil, -1, fmt.Errorf("%s: no answer within %v (--sparql-timeout): %w", where, c.timeout, context.DeadlineExceeded)
		}
		return nil, -1, fmt.Errorf("%s: unreachable: %w", where, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, maxBody+1))
	if err != nil {
		if actx.Err() != nil && ctx.Err() == nil {
			return nil, -1, fmt.Errorf("%s: reply not finished within %v (--sparql-timeout): %w", where, c.timeout, context.DeadlineExceeded)
		}
		return nil, -1, fmt.Errorf("%s: read reply: %w", where, err)
	}
	c.queries.Add(1)
	if len(body) > maxBody {
		return nil, -1, retry.Permanent(fmt.Errorf("%s: reply over %d MiB", where, maxBody>>20))
	}
	status := fmt.Sprintf("status %d %s", res.StatusCode, http.StatusText(res.StatusCode))
	method := ""
	if get {
		method = " (sent by GET: the endpoint refused POST)"
	}
	switch {
	case res.StatusCode == http.StatusMethodNotAllowed || res.StatusCode == http.StatusNotImplemented:
		return nil, -1, &methodRefused{status}
	case res.StatusCode >= 500 || res.StatusCode == http.StatusTooManyRequests || res.StatusCode == http.StatusRequestTimeout:
		return nil, retry.After(res.Header), fmt.Errorf("%s: %s%s: %s", where, status, method, message(body))
	case res.StatusCode >= 400:
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %s%s: %w: %s", where, status, method, ErrRejected, message(body)))
	case res.StatusCode >= 300:
		return nil, -1, retry.Permanent(fmt.Errorf("%s: %s (redirected to %q: give that URL)", where, status, res.Header.Get("Location")))
	}
	r, err := ParseResults(body)
	if err != nil {
		ct := res.Header.Get("Content-Type")
		return nil, -1, retry.Permanent(fmt.Errorf("%s: the reply (%s) is %w; is this a SPARQL endpoint?", where, ct, err))
	}
	return r, -1, nil
}

// message is a server's error text, on one line and bounded.
func message(body []byte) string {
	s := strings.Join(strings.Fields(string(body[:min(len(body), 4000)])), " ")
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	if s == "" {
		return "(no message)"
	}
	return s
}

// literal quotes s as a SPARQL string literal.
func literal(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
