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
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio answers MCP messages read from in, one JSON-RPC message a
// line, on out (`stem serve --mcp-stdio`), until in ends or ctx is done.
// Unlike the SDK's own stdio transport, no input ends the session: a line
// that is not JSON is answered with a parse error (-32700), one that is
// not a JSON-RPC message, a batch, a call with "id": null, or a line over
// Options.MaxBody bytes (never held whole in memory) with an invalid
// request (-32600), each reported on Options.Log with its line number; so
// is a call the session would not answer (a notification sent with an id,
// an id already in use). Every reply carries its call's id exactly as
// sent. When in ends, the replies still owed are written before
// ServeStdio returns (waiting at most the question deadline and 5 s
// more); when ctx ends (the first SIGINT or SIGTERM), no more input is
// read and the calls in flight have Options.Grace to be answered; Abort
// (a second signal) cuts them off.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	t := &stdioTransport{in: in, out: out, maxLine: int(s.opt.MaxBody), log: s.opt.Log,
		drain: s.opt.Timeout + 5*time.Second, grace: s.opt.Grace, stop: ctx.Done(), abort: s.abort}
	// The calls in flight outlive ctx, for the grace; Abort ends them.
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-s.abort:
			cancel()
		case <-run.Done():
		}
	}()
	err := s.mcp.Run(run, t)
	if n := t.cutOff.Load(); n > 0 {
		return fmt.Errorf("serve: %d MCP calls in flight were cut off unanswered (%s)", n, t.why.Load())
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// stdioTransport is the mcp.Transport of ServeStdio.
type stdioTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int
	log     io.Writer
	// drain is how long the replies owed may take once in ends, grace
	// once stop is closed; abort cuts either short.
	drain, grace time.Duration
	stop, abort  <-chan struct{}
	// cutOff counts the calls left unanswered when the session ended,
	// and why says why.
	cutOff atomic.Int64
	why    atomic.Value
}

// Connect implements mcp.Transport: it starts reading in.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{t: t, msgs: make(chan jsonrpc.Message), eof: make(chan struct{}), closed: make(chan struct{}),
		answered: make(chan struct{}, 1), pending: map[int64]json.RawMessage{}, inUse: map[string]int64{}}
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

	mu sync.Mutex
	// The calls read and not yet answered: the SDK sees each under an id
	// of its own (next), and pending maps it back to the id as sent;
	// inUse maps an id as sent (idKey) to its own.
	next    int64
	pending map[int64]json.RawMessage
	inUse   map[string]int64
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
	m, bad := inspect(line)
	if bad != nil {
		if bad.silent {
			c.logf("MCP input line %d: %s; a notification, so not answered", n, bad.msg)
			return true
		}
		c.refuse(n, bad.id, bad.code, bad.msg)
		return true
	}
	if m.method == "notifications/cancelled" {
		line = c.cancelled(m, line)
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(n, m.id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("not a JSON-RPC 2.0 message: %v", err))
		return true
	}
	if req, ok := msg.(*jsonrpc.Request); ok && m.call {
		// Calls the session would never answer are answered here, so
		// that no call goes without a reply.
		k := idKey(m.id)
		c.mu.Lock()
		_, dup := c.inUse[k]
		if !dup {
			c.next++
			c.pending[c.next] = m.id
			c.inUse[k] = c.next
			req.ID, _ = jsonrpc.MakeID(float64(c.next))
		}
		c.mu.Unlock()
		if dup {
			c.refuse(n, m.id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("id %s is the id of a call not answered yet", m.id))
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

// cancelled returns a notifications/cancelled line with its requestId,
// when a call in flight has it, made the id the session knows the call by.
func (c *stdioConn) cancelled(m message, line []byte) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(m.fields["params"], &p) != nil || p["requestId"] == nil {
		return line
	}
	c.mu.Lock()
	own, ok := c.inUse[idKey(p["requestId"])]
	c.mu.Unlock()
	if !ok {
		return line
	}
	p["requestId"] = json.RawMessage(strconv.FormatInt(own, 10))
	m.fields["params"], _ = json.Marshal(p)
	b, _ := marshalWire(m.fields)
	return b
}

// refuse answers line n with a JSON-RPC error and reports it on the log.
func (c *stdioConn) refuse(n int, id json.RawMessage, code int64, msg string) {
	c.logf("MCP input line %d: %s; answered with error %d", n, msg, code)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, err := marshalWire(rpcErrorReply{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: fmt.Sprintf("line %d: %s", n, msg)}})
	if err == nil {
		c.writeLine(data)
	}
}

func (c *stdioConn) logf(format string, args ...any) {
	if c.t.log != nil {
		fmt.Fprintf(c.t.log, "stem serve: "+format+"\n", args...)
	}
}

// Read implements mcp.Connection. Once the input has ended, or ctx of
// ServeStdio has (a stop signal), it returns io.EOF only after every call
// read has been answered, or the drain time has passed, so that the
// session does not end with replies owed.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	drain, why := c.t.drain, "the input ended"
	select {
	case m := <-c.msgs:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case <-c.eof:
	case <-c.t.stop:
		drain, why = c.t.grace, "asked to stop"
		c.logf("stopping MCP over stdio: no more input is read; the %d calls in flight have up to %v (--grace) to be answered", c.owed(), drain)
	}
	deadline := time.NewTimer(drain)
	defer deadline.Stop()
	for {
		owed := c.owed()
		if owed == 0 {
			return nil, io.EOF
		}
		select {
		case <-c.answered:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.closed:
			return nil, io.EOF
		case <-c.t.abort:
			c.t.cutOff.Store(int64(owed))
			c.t.why.Store("asked again to stop")
			c.logf("MCP over stdio: %d calls in flight cut off, asked again to stop", owed)
			return nil, io.EOF
		case <-deadline.C:
			c.t.cutOff.Store(int64(owed))
			c.t.why.Store(fmt.Sprintf("%s %v before", why, drain))
			c.logf("MCP over stdio: %s with %d calls still unanswered after %v; stopping", why, owed, drain)
			return nil, io.EOF
		}
	}
}

// owed counts the calls read and not answered.
func (c *stdioConn) owed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending)
}

// Write implements mcp.Connection: one message a line, a reply with its
// call's id as sent. An error reply with no code (the SDK's, for a call
// before initialize) gets -32600, so that every error is a JSON-RPC one.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, isResp := msg.(*jsonrpc.Response)
	if !isResp {
		data, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		return c.writeLine(data)
	}
	id, known := json.RawMessage(nil), false
	if own, ok := resp.ID.Raw().(int64); ok {
		c.mu.Lock()
		if id, known = c.pending[own]; known {
			delete(c.pending, own)
			delete(c.inUse, idKey(id))
		}
		c.mu.Unlock()
	}
	if !known {
		raw, err := marshalWire(resp.ID.Raw())
		if err != nil {
			return err
		}
		id = raw
	}
	out := wireResponse{JSONRPC: "2.0", ID: id, Result: resp.Result}
	if resp.Error != nil {
		out.Result = nil
		if !errors.As(resp.Error, &out.Error) || out.Error.Code == 0 {
			out.Error = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: resp.Error.Error()}
		}
	} else if out.Result == nil {
		out.Result = json.RawMessage("null")
	}
	data, err := marshalWire(out)
	if err != nil {
		return err
	}
	err = c.writeLine(data)
	if known {
		select {
		case c.answered <- struct{}{}:
		default:
		}
	}
	return err
}

// wireResponse is a JSON-RPC response with its id as sent.
type wireResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *jsonrpc.Error  `json:"error,omitempty"`
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

// idKey is an id as sent, as a map key: a string by its value (however
// escaped), a number by its text.
func idKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "string:" + s
	}
	return "number:" + string(raw)
}
