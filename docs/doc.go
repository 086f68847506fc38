// Package docs holds stem's user guide, the Markdown files in this folder,
// and the test that runs every command the guide and the README show
// (docs_test.go). It has no code of its own.
package docs
