package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// MCP's JSON-RPC, before the SDK sees it. Both transports (streamable
// HTTP, mcpHTTP; stdio, ServeStdio) check each message here (inspect), so
// that what the SDK would mangle or leave unanswered is answered with the
// right error, and give the SDK each call under an id of their own: the
// SDK reads a number id as a float64 made int64 (9223372036854775807 came
// back as -9223372036854775808, 1.5 as 1, 9007199254740993 as
// 9007199254740992), so the id the client sent is kept as its raw JSON and
// put back in the reply.

// codeRefused is the JSON-RPC error code of a request the server's guards
// or bounds refuse (unauthorized, busy, a reply over --max-reply): one
// code of the implementation-defined range, with data.code saying which.
const codeRefused = -32000

// rpcErrorReply is a JSON-RPC 2.0 error response.
type rpcErrorReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcError        `json:"error"`
}

type rpcError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// rpcErrorData is the HTTP status and stable code of an error that also
// has one on the JSON API, so that an MCP client can tell them apart.
type rpcErrorData struct {
	Status int    `json:"status"`
	Code   string `json:"code"`
}

// refusal is a message refused before the SDK sees it.
type refusal struct {
	id     json.RawMessage // null when the message's id is not known
	code   int64
	msg    string
	status int  // over HTTP, when the message is a request alone
	silent bool // a notification: refused, but owed no reply
}

// reply encodes the refusal as a JSON-RPC error response.
func (f *refusal) reply() []byte {
	return rpcErrorBytes(f.id, f.code, f.msg, nil)
}

// marshalWire encodes v as one JSON value without escaping HTML: a
// client's id is echoed byte for byte ("&" stays "&", not "\u0026"), as a
// client that matches replies to requests by their raw id needs it.
func marshalWire(v any) ([]byte, error) {
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// rpcErrorBytes encodes a JSON-RPC error response; data, when not nil,
// is its "data" (an *rpcErrorData, or the raw data of the SDK's error).
func rpcErrorBytes(id json.RawMessage, code int64, msg string, data any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	if d, ok := data.(*rpcErrorData); ok && d == nil {
		data = nil
	}
	b, err := marshalWire(rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: msg, Data: data}})
	if err != nil {
		// Only a raw id or data could fail, and they were read as JSON.
		b, _ = marshalWire(rpcErrorReply{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: rpcError{Code: code, Message: msg}})
	}
	return b
}

// rpcCodeOf is the JSON-RPC code of a request error: the client's mistake
// in the request as a whole is an invalid request, a refusal by the
// server's guards or bounds is codeRefused.
func rpcCodeOf(status int) int64 {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusUnprocessableEntity:
		return codeRefused
	}
	return jsonrpc.CodeInvalidRequest
}

// message is one JSON-RPC message as read.
type message struct {
	fields map[string]json.RawMessage
	id     json.RawMessage // as sent; empty when absent
	method string
	call   bool // a request with an id: owed a reply
}

// inspect reads one JSON-RPC message, or returns why it is refused.
func inspect(raw []byte) (message, *refusal) {
	raw = bytes.TrimSpace(raw)
	var m message
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m.fields) != nil {
		return m, &refusal{code: jsonrpc.CodeInvalidRequest, msg: "not a JSON-RPC message: want a JSON object", status: http.StatusBadRequest}
	}
	id, hasID := m.fields["id"]
	if hasID {
		switch {
		case string(id) == "null":
			return m, &refusal{code: jsonrpc.CodeInvalidRequest, msg: `"id": null: a call needs a string or number id, a notification none`, status: http.StatusBadRequest}
		case id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9':
			m.id = id
		default:
			// Refused with the id as sent, for the client to match.
			return m, &refusal{id: id, code: jsonrpc.CodeInvalidRequest, msg: fmt.Sprintf("id %s: an id is a string or a number", clip(string(id))), status: http.StatusBadRequest}
		}
	}
	refuse := func(code int64, format string, args ...any) (message, *refusal) {
		return m, &refusal{id: m.id, code: code, msg: fmt.Sprintf(format, args...), status: http.StatusBadRequest, silent: !hasID}
	}
	if v := m.fields["jsonrpc"]; string(v) != `"2.0"` {
		return refuse(jsonrpc.CodeInvalidRequest, `"jsonrpc" is %s: want "2.0"`, orAbsent(v))
	}
	method, hasMethod := m.fields["method"]
	if !hasMethod {
		_, result := m.fields["result"]
		_, failure := m.fields["error"]
		switch {
		case !result && !failure:
			return refuse(jsonrpc.CodeInvalidRequest, `neither a request (no "method") nor a response (no "result" or "error")`)
		case !hasID:
			return refuse(jsonrpc.CodeInvalidRequest, "a response with no id")
		}
		return m, nil
	}
	if json.Unmarshal(method, &m.method) != nil {
		return refuse(jsonrpc.CodeInvalidRequest, `"method" is %s: want a string`, clip(string(method)))
	}
	m.call = hasID
	if m.call && strings.HasPrefix(m.method, "notifications/") {
		return refuse(jsonrpc.CodeInvalidRequest, "%s is a notification: send it without an id", m.method)
	}
	params, hasParams := m.fields["params"]
	switch {
	case hasParams && (len(params) == 0 || params[0] != '{'):
		// Every MCP method takes named parameters; null is none.
		return refuse(jsonrpc.CodeInvalidParams, `invalid params: %s's "params" is %s: want an object`, m.method, clip(string(params)))
	case !hasParams && (m.method == "initialize" || m.method == "tools/call"):
		return refuse(jsonrpc.CodeInvalidParams, `invalid params: %s needs "params"`, m.method)
	}
	return m, nil
}

// clip shortens a value quoted in an error to 100 bytes.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

func orAbsent(v json.RawMessage) string {
	if v == nil {
		return "absent"
	}
	return clip(string(v))
}

// withID returns the message with its id replaced by id.
func (m message) withID(id json.RawMessage) []byte {
	f := make(map[string]json.RawMessage, len(m.fields))
	for k, v := range m.fields {
		f[k] = v
	}
	f["id"] = id
	b, _ := marshalWire(f) // raw values read by json.Unmarshal marshal back
	return b
}

// surrogateID is the id the SDK sees for a call over HTTP: each call is
// given to it alone.
var surrogateID = json.RawMessage("1")

// mcpHTTP answers MCP's streamable HTTP on /mcp with the SDK's handler
// (sdk), one message at a time: it refuses what the SDK would answer with
// the wrong code (a wrong method, Content-Type or Accept, a body over
// --max-body, all -32700 "not JSON" before), answers each call of a batch
// in turn, within one question deadline and one reply budget
// (Options.MaxReply), each question holding a slot (--max-concurrent)
// until the batch's reply is written, and returns every id as sent.
func (s *Server) mcpHTTP(sdk http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			s.refuse(w, r, &requestError{http.StatusMethodNotAllowed, "method_not_allowed",
				fmt.Sprintf("%s /mcp: MCP here takes POST alone (JSON-RPC messages, each call answered in its reply; no sessions or streams)", r.Method)})
			return
		}
		if mt := mediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			s.refuse(w, r, &requestError{http.StatusUnsupportedMediaType, "content_type", fmt.Sprintf("send JSON-RPC as Content-Type application/json, not %q", mt)})
			return
		}
		if !acceptsJSON(r.Header.Values("Accept")) {
			s.refuse(w, r, &requestError{http.StatusNotAcceptable, "not_acceptable", fmt.Sprintf("Accept %q: replies here are application/json (MCP clients send Accept: application/json, text/event-stream)", strings.Join(r.Header.Values("Accept"), ", "))})
			return
		}
		body, err := s.readBody(w, r)
		if err != nil {
			s.refuse(w, r, err)
			return
		}
		body = bytes.TrimSpace(body)
		if !json.Valid(body) {
			var v any
			err := json.Unmarshal(body, &v)
			writeRaw(w, http.StatusBadRequest, rpcErrorBytes(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the body is not JSON: %v", err), nil))
			return
		}
		ctx, release := withLease(r.Context())
		defer release() // once the reply is written
		ctx, cancel := context.WithTimeout(ctx, s.opt.Timeout)
		defer cancel()
		ctx, b := withBudget(ctx, s.opt.MaxReply)
		if body[0] != '[' {
			reply, status := s.mcpOne(ctx, r, sdk, body, b)
			if reply == nil {
				w.WriteHeader(status)
				return
			}
			writeRaw(w, status, reply)
			return
		}
		var batch []json.RawMessage
		if json.Unmarshal(body, &batch) != nil || len(batch) == 0 {
			writeRaw(w, http.StatusBadRequest, rpcErrorBytes(nil, jsonrpc.CodeInvalidRequest, "an empty batch: send at least one message", nil))
			return
		}
		var out bytes.Buffer
		out.WriteByte('[')
		n := 0
		for _, raw := range batch {
			reply, _ := s.mcpOne(ctx, r, sdk, raw, b)
			if reply == nil {
				continue
			}
			if n > 0 {
				out.WriteByte(',')
			}
			out.Write(reply)
			n++
		}
		out.WriteByte(']')
		if n == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		writeRaw(w, http.StatusOK, out.Bytes())
	})
}

// mcpOne answers one message of an MCP request: its reply (nil when none
// is owed) and, when the message is the request alone, the HTTP status.
func (s *Server) mcpOne(ctx context.Context, r *http.Request, sdk http.Handler, raw []byte, b *budget) ([]byte, int) {
	m, bad := inspect(raw)
	if bad != nil {
		if bad.silent {
			return nil, http.StatusAccepted
		}
		return bad.reply(), bad.status
	}
	fwd := raw
	if m.call {
		fwd = m.withID(surrogateID)
	}
	left := s.remaining(ctx)
	cw := &captureWriter{header: http.Header{}, max: max(left, 0) + 4096}
	req := r.Clone(ctx)
	req.Body = http.NoBody
	if len(fwd) > 0 {
		req.Body = &bodyReader{bytes.NewReader(fwd)}
	}
	req.ContentLength = int64(len(fwd))
	req.Header.Set("Accept", "application/json, text/event-stream")
	sdk.ServeHTTP(cw, req)
	status := cw.status
	if status == 0 {
		status = http.StatusOK
	}
	var reply []byte
	switch {
	case !m.call:
		if status < 400 {
			return nil, http.StatusAccepted
		}
		reply = rpcErrorBytes(nil, jsonrpc.CodeInvalidRequest, strings.TrimSpace(cw.buf.String()), nil)
	case cw.over:
		err := errReplyTooLarge(cw.size, left, s.opt.MaxReply, hintBatch)
		reply = rpcErrorBytes(m.id, codeRefused, err.Error(), &rpcErrorData{http.StatusUnprocessableEntity, "reply_too_large"})
		status = http.StatusUnprocessableEntity
	default:
		reply, status = restoreID(cw, m.id, status)
	}
	b.spend(len(reply))
	return reply, status
}

// restoreID returns the SDK's reply to a call with the call's own id, or
// the SDK's refusal in plain text as a JSON-RPC error with it, and the
// HTTP status of the reply.
func restoreID(cw *captureWriter, id json.RawMessage, status int) ([]byte, int) {
	var env struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int64           `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if !isJSON(cw.header.Get("Content-Type")) || json.Unmarshal(cw.buf.Bytes(), &env) != nil || env.Result == nil && env.Error == nil {
		// The SDK's http.Error: an unsupported MCP-Protocol-Version, say,
		// or a method it does not handle, which is a JSON-RPC error to
		// the call like any other.
		msg := strings.TrimSpace(cw.buf.String())
		if strings.Contains(msg, "not handled") {
			return rpcErrorBytes(id, jsonrpc.CodeMethodNotFound, "method not found: "+msg, nil), http.StatusOK
		}
		return rpcErrorBytes(id, jsonrpc.CodeInvalidRequest, msg, nil), status
	}
	if env.Error != nil {
		if env.Error.Code == 0 {
			// The SDK's refusal of a call before initialize has no code.
			env.Error.Code = jsonrpc.CodeInvalidRequest
		}
		var data any
		if len(env.Error.Data) > 0 {
			data = env.Error.Data
		}
		return rpcErrorBytes(id, env.Error.Code, env.Error.Message, data), status
	}
	var out bytes.Buffer
	out.Grow(len(env.Result) + len(id) + 32)
	out.WriteString(`{"jsonrpc":"2.0","id":`)
	out.Write(id)
	out.WriteString(`,"result":`)
	out.Write(env.Result)
	out.WriteByte('}')
	return out.Bytes(), status
}

// bodyReader is a request body read from memory.
type bodyReader struct{ *bytes.Reader }

func (bodyReader) Close() error { return nil }

// captureWriter keeps what the SDK's handler writes, up to max bytes.
type captureWriter struct {
	header http.Header
	status int
	buf    bytes.Buffer
	max    int
	size   int
	over   bool
}

func (c *captureWriter) Header() http.Header { return c.header }

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
}

func (c *captureWriter) Write(p []byte) (int, error) {
	c.WriteHeader(http.StatusOK)
	c.size += len(p)
	if c.size > c.max {
		c.over = true
		c.buf = bytes.Buffer{}
	}
	if !c.over {
		c.buf.Write(p)
	}
	return len(p), nil
}

// Flush is a no-op: the reply is written whole once the SDK is done.
func (c *captureWriter) Flush() {}

// refuse writes err as the reply to r: a JSON-RPC error object on /mcp,
// which is what an MCP client parses, else the JSON API's error.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if r.URL.Path != "/mcp" {
		writeError(w, err)
		return
	}
	st, code := status(err)
	if st == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	writeRaw(w, st, rpcErrorBytes(nil, rpcCodeOf(st), err.Error(), &rpcErrorData{st, code}))
}

// writeRaw writes a JSON body already encoded.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", fmt.Sprint(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

func mediaType(contentType string) string {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// acceptsJSON says whether Accept headers admit an application/json
// reply (no header admits anything).
func acceptsJSON(accept []string) bool {
	if len(accept) == 0 {
		return true
	}
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			mt, params, _ := mime.ParseMediaType(strings.TrimSpace(part))
			if params["q"] == "0" || params["q"] == "0.0" || params["q"] == "0.00" || params["q"] == "0.000" {
				continue
			}
			switch mt {
			case "application/json", "application/*", "*/*":
				return true
			}
		}
	}
	return false
}
