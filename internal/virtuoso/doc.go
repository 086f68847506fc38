// Package virtuoso runs a private OpenLink Virtuoso 7 (Debian's
// virtuoso-opensource package: virtuoso-t and isql-vt) for tests and
// tools: Start writes a minimal virtuoso.ini into a folder of its own,
// on free 127.0.0.1 ports, runs the server as a child in its own process
// group and returns once the SPARQL endpoint answers; Load bulk-loads
// N-Triples with ld_dir and rdf_loader_run; Stop ends it by its process
// id, never by name.
//
// The ini is written here and nowhere else: scripts/virtuoso wraps the
// command in cmd/virtuoso, which starts a detached server (Options.Detach)
// and stops it later by the pid file it leaves (Attach).
//
// Things about Debian's 7.2.5 a caller must know, all measured:
//   - ResultSetMaxRows (default 10,000) cuts a SPARQL result without an
//     error. The X-SPARQL-MaxRows header (the cap) comes with every reply
//     holding as many rows as the cap, cut or not, so it means "maybe
//     cut". Page with LIMIT/OFFSET below the cap (see kg/sparql).
//   - ServerPort accepts 127.0.0.1:PORT in both [Parameters] and
//     [HTTPServer]; a port already taken makes the server log "Failed
//     HTTP listen" and exit 255, while the other server answers the port,
//     so Start checks the endpoint's bif:virtuoso_ini_path() is its ini.
//   - isql-vt exits 0 when a statement fails (only a failed connection is
//     a non-zero exit): errors are found in its output ("*** Error").
//   - With -f the server logs to standard output, not to ErrorLogFile, so
//     the child's output is kept in virtuoso.out for error messages.
//   - ld_dir reads only folders listed in DirsAllowed, takes its file
//     argument as a SQL LIKE pattern ('_' and '%' are wildcards) and adds
//     nothing, silently, when no file matches. Load therefore links each
//     file under a fixed name into the server's own folder.
//
// This package imports only the standard library and internal/childproc
// (its tests also use kg); nothing but tests, tools and cmd/ should import
// it.
package virtuoso
