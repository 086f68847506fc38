package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// Go's HTTP server answers some requests before any handler sees them,
// in plain text: 431 for headers over MaxHeaderBytes, 400 for a bad
// request line, Host or Content-Length, 501 for an unknown
// Transfer-Encoding, 505 for an unknown HTTP version (net/http's
// conn.serve writes them straight to the connection, one Write each, with
// the fixed headers below), and 417 for an Expect header other than
// 100-continue (an empty reply). No http.Server field or hook reaches
// them, so jsonConns rewrites them on the connection itself as the JSON
// error every other reply is. Two replies cannot be rewritten, as they
// are never written: a request whose headers are not in within the
// header timeout, and a connection that closes mid-request, are closed
// without a reply.

// goErrorHeaders are the headers net/http writes with its own errors.
const goErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// jsonConns wraps a listener so that the errors net/http writes itself
// are JSON.
type jsonConns struct{ net.Listener }

func (l jsonConns) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &jsonConn{Conn: c}, nil
}

// jsonConn rewrites a reply of net/http's own into JSON as it is written.
type jsonConn struct{ net.Conn }

func (c *jsonConn) Write(p []byte) (int, error) {
	if b, ok := rewriteGoError(p); ok {
		if _, err := c.Conn.Write(b); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// CloseWrite lets net/http half-close the connection after a 431, as it
// does a TCP connection's.
func (c *jsonConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// rewriteGoError returns the JSON form of one of net/http's own error
// replies, when p is one.
func rewriteGoError(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 4")) && !bytes.HasPrefix(p, []byte("HTTP/1.1 5")) {
		return nil, false
	}
	line, rest, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok {
		return nil, false
	}
	// "HTTP/1.1 431 Request Header Fields Too Large" or
	// "HTTP/1.1 400 Bad Request: missing required Host header".
	status, err := strconv.Atoi(string(line[9:min(len(line), 12)]))
	if err != nil {
		return nil, false
	}
	_, reason, _ := strings.Cut(string(line), ": ")
	switch {
	case bytes.HasPrefix(p[len(line):], []byte(goErrorHeaders)):
	case status == http.StatusExpectationFailed && bytes.HasSuffix(rest, []byte("Content-Length: 0\r\n\r\n")):
	default:
		return nil, false
	}
	msg := goErrorMessage(status, reason)
	code := strings.ReplaceAll(strings.ToLower(http.StatusText(status)), " ", "_")
	body, _ := json.Marshal(errorBody{Error: msg, Code: code})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n", status, http.StatusText(status))
	h := http.Header{}
	securityHeaders(h)
	h.Write(&b)
	fmt.Fprintf(&b, "Connection: close\r\nContent-Length: %d\r\n\r\n%s\n", len(body)+1, body)
	return b.Bytes(), true
}

// goErrorMessage says what a request net/http refused did wrong.
func goErrorMessage(status int, reason string) string {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return fmt.Sprintf("the request's headers are over %d bytes", maxHeaderBytes)
	case http.StatusNotImplemented:
		return "unsupported Transfer-Encoding: send the body as is or chunked"
	case http.StatusHTTPVersionNotSupported:
		return "unsupported HTTP version: send HTTP/1.1"
	case http.StatusExpectationFailed:
		return "unsupported Expect header: only 100-continue is"
	}
	if reason == "" {
		return "malformed request: the request line or a header could not be read"
	}
	return "malformed request: " + reason
}

// maxHeaderBytes bounds a request's headers (431 beyond).
const maxHeaderBytes = 64 << 10
