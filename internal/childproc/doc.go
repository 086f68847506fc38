// Package childproc holds how the tests' private servers (Virtuoso,
// Oxigraph) are started as child processes: in a process group of their
// own, tied to the life of the process that started them where the
// system allows it. It imports only the standard library.
package childproc
