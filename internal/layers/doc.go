// Package layers holds no code: its test checks that stem's dependencies
// point one way (ARCHITECTURE.md): the command line and the harnesses at
// the top, then the pipeline, the stages, the seams and the backends, with
// nothing below importing what sits above it. Tests may reach up for their
// fixtures, but they too import no KG backend outside kg/backends, no peer
// system from another, and no peer from plan.
package layers
