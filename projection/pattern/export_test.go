package pattern

// Test helpers for the external test package (eval_test.go).
var (
	ExamplesForTest = examples
	DemoDataForTest = demoData
)
