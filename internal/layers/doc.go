// Package layers holds no code: its test checks that stem's dependencies
// point one way (ARCHITECTURE.md): the command line and the harnesses at
// the top, then the pipeline, the stages, the seams and the backends, with
// nothing below importing what sits above it.
package layers
