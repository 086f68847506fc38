package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio answers MCP messages read from in, one JSON-RPC message a
// line, on out (`stem serve --mcp-stdio`), until in ends or ctx is done.
// Unlike the SDK's own stdio transport, no input ends the session: a line
// that is not JSON is answered with a parse error (-32700), one that is
// not a JSON-RPC message, a batch, or a line over Options.MaxBody bytes
// (never held whole in memory) with an invalid request (-32600), each
// reported on Options.Log with its line number; so is a call the session
// would not answer (a notification sent with an id, an id already in
// use). When in ends, the replies
// still owed are written before ServeStdio returns (waiting at most the
// question deadline and 5 s more).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &stdioTransport{in: in, out: out, maxLine: int(s.opt.MaxBody), log: s.opt.Log, drain: s.opt.Timeout + 5*time.Second}
	return s.mcp.Run(ctx, t)
}

// stdioTransport is the mcp.Transport of ServeStdio.
type stdioTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int
	log     io.Writer
	drain   time.Duration
}

// Connect implements mcp.Transport: it starts reading in.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{t: t, msgs: make(chan jsonrpc.Message), eof: make(chan struct{}), closed: make(chan struct{}),
		answered: make(chan struct{}, 1), pending: map[string]int{}}
	go c.read()
	return c, nil
}

// stdioConn is one stdio session: a goroutine reads lines and hands the
// messages to Read; Write writes replies whole, one a line.
type stdioConn struct {
	t         *stdioTransport
	msgs      chan jsonrpc.Message
	eof       chan struct{} // closed once in has ended and every message was handed over
	closed    chan struct{}
	closeOnce sync.Once
	answered  chan struct{} // a reply was written (pending may have emptied)

	wmu sync.Mutex // one message at a time on out

	mu      sync.Mutex
	pending map[string]int // calls read and not yet answered, by id
}

// read reads in line by line until it ends, answering what the session
// cannot take and handing it the rest.
func (c *stdioConn) read() {
	defer close(c.eof)
	br := bufio.NewReaderSize(c.t.in, 64<<10)
	var line []byte
	over := false
	for n := 1; ; {
		frag, err := br.ReadSlice('\n')
		if !over && len(line)+len(frag) > c.t.maxLine {
			// Too long: the rest of the line is read and dropped.
			over, line = true, line[:0]
		}
		if !over {
			line = append(line, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		switch {
		case over:
			c.refuse(n, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("a message over %d bytes (the server's limit)", c.t.maxLine))
		case len(bytes.TrimSpace(line)) > 0:
			if !c.take(n, line) {
				return
			}
		}
		line, over = line[:0], false
		n++
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.logf("MCP input: %v", err)
			}
			return
		}
	}
}

// take hands the message on line n to the session, or answers it with
// the error that keeps it out; false when the session has closed.
func (c *stdioConn) take(n int, line []byte) bool {
	line = bytes.TrimSpace(line)
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		c.refuse(n, nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is not JSON (%v)", err))
		return true
	}
	if line[0] == '[' {
		c.refuse(n, nil, jsonrpc.CodeInvalidRequest, "a batch: send one JSON-RPC message a line")
		return true
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(line, &req)
		c.refuse(n, req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a JSON-RPC 2.0 message: %v", err))
		return true
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(line, &keys)
	if _, ok := msg.(*jsonrpc.Response); ok && keys["result"] == nil && keys["error"] == nil {
		// Neither a call (no "method": the SDK reads field names in any
		// case) nor a reply: it would be dropped unanswered.
		c.refuse(n, keys["id"], jsonrpc.CodeInvalidRequest, `neither a request (no "method") nor a response (no "result" or "error")`)
		return true
	}
	if raw := bytes.TrimSpace(keys["id"]); len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			// The SDK reads a number id as an int64, so the reply to
			// id 1.1 would carry id 1 and match no call.
			c.refuse(n, raw, jsonrpc.CodeInvalidRequest, fmt.Sprintf("id %s: a number id must be an integer that fits in 64 bits", raw))
			return true
		}
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		// Calls the session would never answer are answered here, so
		// that no call goes without a reply.
		id, _ := json.Marshal(req.ID.Raw())
		if strings.HasPrefix(req.Method, "notifications/") {
			c.refuse(n, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("%s is a notification: send it without an id", req.Method))
			return true
		}
		c.mu.Lock()
		k := idKey(req.ID)
		dup := c.pending[k] > 0
		if !dup {
			c.pending[k]++
		}
		c.mu.Unlock()
		if dup {
			c.refuse(n, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("id %s is the id of a call not answered yet", id))
			return true
		}
	}
	select {
	case c.msgs <- msg:
		return true
	case <-c.closed:
		return false
	}
}

// refuse answers line n with a JSON-RPC error and reports it on the log.
func (c *stdioConn) refuse(n int, id json.RawMessage, code int64, msg string) {
	c.logf("MCP input line %d: %s; answered with error %d", n, msg, code)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: fmt.Sprintf("line %d: %s", n, msg)}})
	if err == nil {
		c.writeLine(data)
	}
}

func (c *stdioConn) logf(format string, args ...any) {
	if c.t.log != nil {
		fmt.Fprintf(c.t.log, "stem serve: "+format+"\n", args...)
	}
}

// Read implements mcp.Connection. Once the input has ended it returns
// io.EOF only after every call read has been answered (or the drain time
// has passed), so that the session does not end with replies owed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case <-c.eof:
	}
	deadline := time.NewTimer(c.t.drain)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		owed := len(c.pending)
		c.mu.Unlock()
		if owed == 0 {
			return nil, io.EOF
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-deadline.C:
			c.logf("MCP input ended with %d calls still unanswered after %v; stopping", owed, c.t.drain)
			return nil, io.EOF
		}
	}
}

// Write implements mcp.Connection: one message a line. An error reply
// with no code (the SDK's, for a call before initialize) gets -32600, so
// that every error is a JSON-RPC one.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp && resp.Error != nil {
		var we *jsonrpc.Error
		if !errors.As(resp.Error, &we) || we.Code == 0 {
			r := *resp
			r.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: resp.Error.Error()}
			msg = &r
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if isResp && resp.ID.IsValid() {
		c.mu.Lock()
		k := idKey(resp.ID)
		if c.pending[k]--; c.pending[k] <= 0 {
			delete(c.pending, k)
		}
		c.mu.Unlock()
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return nil
}

func (c *stdioConn) writeLine(data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.t.out.Write(append(data, '\n'))
	return err
}

// Close implements mcp.Connection.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

// SessionID implements mcp.Connection: stdio has one session.
func (c *stdioConn) SessionID() string { return "" }

// idKey is a request id as a map key (ids are numbers or strings).
func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }
