package serve

import "embed"

// webFiles are the evidence viewer's page, script and style, built into
// the binary: no CDN, nothing fetched at run time.
//
//go:embed web
var webFiles embed.FS
