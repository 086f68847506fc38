package serve

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
)

// jsonErrors makes every error reply JSON. The routes write their own
// (errorBody; a JSON-RPC error on /mcp, see mcpHTTP), but the mux (405
// for a route's other methods, 404 for an unknown path) and the viewer's
// file server write plain text: their status is kept and their text
// becomes the JSON error's message. It also sets the headers every reply
// carries (securityHeaders).
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		jw := &jsonErrorWriter{ResponseWriter: w}
		h.ServeHTTP(jw, r)
		if !jw.rewrite {
			return
		}
		msg := strings.TrimSpace(jw.text.String())
		hdr := w.Header()
		hdr.Del("Content-Length")
		if r.URL.Path == "/mcp" {
			writeRaw(w, jw.status, rpcErrorBytes(nil, rpcCodeOf(jw.status), msg, nil))
			return
		}
		code := strings.ReplaceAll(strings.ToLower(http.StatusText(jw.status)), " ", "_")
		switch jw.status {
		case http.StatusNotFound:
			msg = fmt.Sprintf("no route %s %s: %s", r.Method, r.URL.Path, apiRoutes)
		case http.StatusMethodNotAllowed:
			if !apiRoute(r.URL.Path) {
				// Only the viewer's file server matched, by GET: to any
				// other method the path is no route at all.
				hdr.Del("Allow")
				writeJSON(w, http.StatusNotFound, errorBody{Error: fmt.Sprintf("no route %s %s: %s", r.Method, r.URL.Path, apiRoutes), Code: "not_found"})
				return
			}
			if m, ok := postOnly[r.URL.Path]; ok {
				// The mux's Allow counts GET, which is there only to
				// answer this error.
				hdr.Set("Allow", m)
			}
			msg = fmt.Sprintf("%s %s: this route takes %s", r.Method, r.URL.Path, hdr.Get("Allow"))
		}
		if code == "" {
			code = fmt.Sprintf("http_%d", jw.status)
		}
		writeJSON(w, jw.status, errorBody{Error: msg, Code: code})
	})
}

// apiRoutes lists the API for an error about a route that is not one.
const apiRoutes = "the API is POST /v1/ask, GET /v1/entities?q=TEXT, GET /v1/entities/NAME/neighbours and POST /mcp"

// apiRoute says whether path is a route of the API or of the server
// itself, rather than a file the viewer may have.
func apiRoute(path string) bool {
	switch path {
	case "/v1/ask", "/v1/entities", "/mcp", "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(path, "/v1/entities/")
}

// postOnly are the routes that take POST alone though a GET handler is
// registered, to answer it with 405.
var postOnly = map[string]string{"/v1/ask": "POST"}

// jsonErrorWriter holds back an error reply that is not JSON, to be
// written again as JSON once the handler returns.
type jsonErrorWriter struct {
	http.ResponseWriter
	wroteHeader bool
	rewrite     bool
	status      int
	text        bytes.Buffer
}

func (w *jsonErrorWriter) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	if status >= 400 && !isJSON(w.Header().Get("Content-Type")) {
		w.rewrite, w.status = true, status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *jsonErrorWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.rewrite {
		if n := 4096 - w.text.Len(); n > 0 {
			w.text.Write(b[:min(len(b), n)])
		}
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on, for streamed replies.
func (w *jsonErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && !w.rewrite {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *jsonErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func isJSON(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}
